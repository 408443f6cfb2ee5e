// Windows over many series, the time split that keeps validation targets out of training, and
// deterministic shuffling into batches.
//
// A window is an index range, (series, start): rows [start, start + encoder_length) of the
// series are the encoder steps, the next prediction_length rows the decoder steps. Nothing is
// copied per window; batches are gathered from the per-series columns (batch.h), so memory
// grows with the data, not with data x window length.
//
// Split of a series with n rows, validation part = its last v rows (v = validation_steps, or
// floor(validation_fraction * n)), b = n - v:
//   training windows:   start = 0, stride, 2 * stride, ... while start + L <= b
//                       (L = encoder_length + prediction_length): every row a training window
//                       touches, encoder and decoder, lies before b;
//   validation windows: start = max(0, b - encoder_length), then every stride, while
//                       start + L <= n: the decoder steps lie in [b, n) (the encoder may look
//                       back into the training part: that is history, not a target).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "config/train_config.h"

namespace tft {

struct Window {
  std::uint32_t series = 0;  // index into TimeSeriesDataset::series()
  std::uint32_t start = 0;   // first encoder row, counted from the series' first row
};

bool operator==(const Window& a, const Window& b);
bool operator!=(const Window& a, const Window& b);

// Rows of a series of `length` rows that form its validation part.
std::int64_t validation_rows(std::int64_t length, const SplitConfig& split);

// Appends the windows of one series (`train_rows` = b above) to `training` and `validation`.
void append_series_windows(std::uint32_t series, std::int64_t length, std::int64_t train_rows,
                           const WindowConfig& windows, std::vector<Window>& training,
                           std::vector<Window>& validation);

// A uniform integer in [0, bound) from `rng` by rejection, identical on every platform
// (std::uniform_int_distribution and std::shuffle are implementation-defined). bound > 0.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound);

// Fisher-Yates shuffle with uniform_below.
template <typename T>
void deterministic_shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(items[i - 1], items[j]);
  }
}

// At most `limit` of `windows`, evenly spaced in their order (series, then time): a smaller
// sample that still covers every series and the whole time range.
void thin_evenly(std::vector<Window>& windows, std::size_t limit);

// `windows` in order, cut into batches of `batch_size` (>= 1; the last may be smaller).
std::vector<std::vector<Window>> cut_into_batches(const std::vector<Window>& windows,
                                                  std::size_t batch_size);

class WindowSampler {
 public:
  // batch_size >= 1 (ConfigError otherwise).
  WindowSampler(std::vector<Window> windows, std::int64_t batch_size, bool shuffle,
                std::uint64_t seed);

  std::size_t num_windows() const { return windows_.size(); }
  // ceil(num_windows / batch_size): the last batch may be smaller.
  std::size_t num_batches() const;

  // The windows in the order of epoch `epoch` (0-based). Shuffled with an std::mt19937_64
  // seeded from (seed, epoch) alone, so epoch k has the same order whatever ran before (a run
  // resumed from a snapshot sees the same batches); unshuffled: as given.
  std::vector<Window> epoch_order(std::uint64_t epoch) const;
  // That order cut into batches of batch_size.
  std::vector<std::vector<Window>> epoch_batches(std::uint64_t epoch) const;

 private:
  std::vector<Window> windows_;
  std::size_t batch_size_;
  bool shuffle_;
  std::uint64_t seed_;
};

}  // namespace tft
