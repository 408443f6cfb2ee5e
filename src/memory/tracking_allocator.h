// Counting CPU tensor memory: a c10::Allocator that wraps c10's CPU allocation and keeps the
// live and peak bytes of every tensor allocated while it is installed.
//
// Two kinds of counters: process-wide ones, which every allocation by any thread feeds, and
// accounts (CpuMemoryAccount), which count only the allocations made by threads that have the
// account installed (CpuMemoryAccountScope), so two trainers measuring at the same time on two
// threads each see their own tensors. A block remembers its account, so its free is charged
// back to it whichever thread frees it. It is installed when this library loads
// and stays installed: LibTorch frees some raw buffers (oneDNN's) through whichever CPU
// allocator is current, so putting another one back while they live would free our blocks
// with the wrong function (tracking_allocator.cpp). Tensors allocated before installation are
// never counted (their frees are not either).
#pragma once

#include "common/thread_slot.h"

#include <atomic>
#include <cstdint>
#include <memory>

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

// One consumer's share of the counters: the bytes of tensors allocated on threads that had it
// installed.
class CpuMemoryAccount {
 public:
  CpuMemoryCounters counters() const;
  // Sets the peak to the current bytes, starting a new measurement window.
  void reset_peak();

  // Called by the allocator.
  void count_allocation(std::int64_t bytes);
  void count_free(std::int64_t bytes);

 private:
  std::atomic<std::int64_t> current_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<std::int64_t> allocations_{0};
};

// Installs `account` (null: none) on this thread for the scope's lifetime.
using CpuMemoryAccountScope = ThreadSlot<CpuMemoryAccount>::Scope;

// The account installed on this thread (null: none).
std::shared_ptr<CpuMemoryAccount> current_cpu_memory_account();

bool cpu_tracking_installed();
// The process-wide counters.
CpuMemoryCounters cpu_memory_counters();
// Sets the process-wide peak to the current bytes, starting a new measurement window.
void reset_cpu_peak();

}  // namespace tft::memory
