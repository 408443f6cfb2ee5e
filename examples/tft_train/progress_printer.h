// A progress callback that prints: on a terminal a one-line bar redrawn in place with '\r'
// (epoch, step, loss, samples/s, peak activation memory), at most ten times a second, and one
// finished line per epoch; elsewhere (a log file, a pipe) one plain line per epoch only.
// The runner's; the trainer only calls a ProgressCallback (train_report.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "report/train_report.h"

namespace tft {

class ProgressPrinter {
 public:
  // Terminal mode when `out` is a terminal (isatty).
  explicit ProgressPrinter(std::FILE* out = stderr);
  ProgressPrinter(std::FILE* out, bool terminal);

  // Prints and returns true (never cancels).
  bool operator()(const TrainProgress& progress);

  bool terminal() const { return terminal_; }

  // Ends a bar left on the terminal line (before printing something else, an error say).
  void end_line();

 private:
  std::FILE* out_;
  bool terminal_;
  std::size_t last_width_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
};

// The one-line text of an epoch's metrics (what the printer writes at each epoch's end).
std::string epoch_line(const TrainProgress& progress);

}  // namespace tft
