// The CPU time this process has used, all its threads together: a cost that other processes
// competing for the cores inflate far less than wall time (a shared machine's step took 1x to
// 5x its quiet wall time, the same work). What the budget planner charges a unit on the CPU,
// and what tft-bench reports beside wall time.
#pragma once

#include <time.h>

namespace tft {

inline double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace tft
