// Counting CPU tensor memory: a c10::Allocator that wraps c10's CPU allocation and keeps the
// live and peak bytes of every tensor allocated while it is installed.
//
// The counters are process-wide: tensors allocated by any thread count, so two trainers that
// measure at the same time see each other's memory. Tensors allocated before installation are
// never counted (their frees are not either); tensors allocated while installed are uncounted
// correctly even if they outlive the installation.
#pragma once

#include <cstdint>

namespace tft::memory {

struct CpuMemoryCounters {
  std::int64_t current_bytes = 0;  // bytes held by live tensors counted by the tracker
  std::int64_t peak_bytes = 0;     // highest current_bytes since the last reset_cpu_peak()
  std::int64_t allocations = 0;    // number of allocations since installation
};

// Installs the tracking allocator as LibTorch's CPU allocator for the lifetime of the scope.
// Scopes nest (and may live on different threads): the first one installs, the last one to
// end puts the previous allocator back. Throws tft::Error if LibTorch keeps another allocator
// of higher priority in place.
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
