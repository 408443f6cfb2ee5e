// Counting CPU tensor memory: a c10::Allocator that wraps c10's CPU allocation and keeps the
// live and peak bytes of every tensor allocated while it is installed.
//
// The counters are process-wide: tensors allocated by any thread count, so two trainers that
// measure at the same time see each other's memory. It is installed when this library loads
// and stays installed: LibTorch frees some raw buffers (oneDNN's) through whichever CPU
// allocator is current, so putting another one back while they live would free our blocks
// with the wrong function (tracking_allocator.cpp). Tensors allocated before installation are
// never counted (their frees are not either).
#pragma once

#include <cstdint>

namespace tft::memory {

struct CpuMemoryCounters {
  std::int64_t current_bytes = 0;  // bytes held by live tensors counted by the tracker
  std::int64_t peak_bytes = 0;     // highest current_bytes since the last reset_cpu_peak()
  std::int64_t allocations = 0;    // number of allocations since installation
};

// Makes sure the tracking allocator is LibTorch's CPU allocator (it is from load time on;
// this throws tft::Error if LibTorch put another allocator of higher priority in place).
// Ending the scope leaves it installed, see above.
class CpuMemoryTrackingScope {
 public:
  CpuMemoryTrackingScope();
  ~CpuMemoryTrackingScope();
  CpuMemoryTrackingScope(const CpuMemoryTrackingScope&) = delete;
  CpuMemoryTrackingScope& operator=(const CpuMemoryTrackingScope&) = delete;
};

bool cpu_tracking_installed();
CpuMemoryCounters cpu_memory_counters();
// Sets the peak to the current bytes, starting a new measurement window.
void reset_cpu_peak();

}  // namespace tft::memory
