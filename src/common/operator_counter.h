// Counts what a GPU pays for in a stretch of work: ATen operator calls (on a GPU, each one that
// computes is a kernel launch, and each costs host time whatever the device) and host syncs
// (reading a value back: .item(), a copy from a device to the CPU, nonzero's data-dependent
// size). DESIGN.md, "Performance rules": both are reported and kept down like time and memory.
//
// Operator calls are every "aten::" RecordFunction event on every thread, nested ones included,
// which is what torch.profiler lists as operator events for the same work, so the figure
// compares with a Python peer's counted that way (bench/peer/peer_bench.py --count-ops).
// Work is split into named phases (forward, loss, backward, optimizer) by the thread that
// drives it; an event counts towards the phase current when it starts, whichever thread runs
// it (the autograd engine runs backward on its own threads on a GPU).
//
// The callback is global and exists only while a counter lives, at most one at a time: count one
// step, never a timed one (the callback slows every operator).
#pragma once

#include <ATen/record_function.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tft {

struct OperatorCounts {
  std::int64_t calls = 0;  // ATen operator calls
  std::int64_t syncs = 0;  // host syncs among them
  OperatorCounts& operator+=(const OperatorCounts& other);
};

class OperatorCounter {
 public:
  // Starts counting in phase `first_phase`. std::logic_error when another counter is active.
  explicit OperatorCounter(std::string first_phase = "step");
  ~OperatorCounter();  // stops counting
  OperatorCounter(const OperatorCounter&) = delete;
  OperatorCounter& operator=(const OperatorCounter&) = delete;

  // Events from now on count towards `phase` (a phase named twice adds up).
  void begin_phase(const std::string& phase);

  // Per phase, in the order the phases began.
  std::vector<std::pair<std::string, OperatorCounts>> phases() const;
  OperatorCounts total() const;
  // Calls per operator name ("aten::addmm"), every phase together: what a profile would list.
  std::map<std::string, std::int64_t> calls_by_operator() const;

  // For the callback.
  void record(const char* name, bool sync);

 private:
  at::CallbackHandle handle_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, OperatorCounts>> phases_;
  std::size_t current_ = 0;
  std::map<std::string, std::int64_t> by_operator_;
};

}  // namespace tft
