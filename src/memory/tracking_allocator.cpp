#include "memory/tracking_allocator.h"

#include "common/error.h"
#include "common/torch_compat.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace tft::memory {
namespace {

// Each block starts with a header holding its size, so freeing needs no lookup table. The
// header is one alignment unit wide, so the data pointer keeps c10's 64-byte alignment.
constexpr std::size_t kHeaderBytes = 64;
static_assert(kHeaderBytes >= sizeof(std::size_t));

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};

void count_allocation(std::int64_t bytes) {
  const std::int64_t now = g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

class TrackingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t bytes) TFT_ALLOCATE_CONST override {
    void* block = c10::alloc_cpu(bytes + kHeaderBytes);
    std::memcpy(block, &bytes, sizeof(bytes));
    void* data = static_cast<char*>(block) + kHeaderBytes;
    count_allocation(static_cast<std::int64_t>(bytes));
    // LibTorch requires data == context for an allocator with a raw_deleter.
    return {data, data, &deallocate, c10::Device(c10::DeviceType::CPU)};
  }

  static void deallocate(void* data) {
    if (data == nullptr) return;
    void* block = static_cast<char*>(data) - kHeaderBytes;
    std::size_t bytes = 0;
    std::memcpy(&bytes, block, sizeof(bytes));
    g_current.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
    c10::free_cpu(block);
  }

  c10::DeleterFnPtr raw_deleter() const override { return &deallocate; }

#if TFT_ALLOCATOR_HAS_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#endif
};

TrackingAllocator g_tracking_allocator;

std::mutex g_install_mutex;
int g_install_depth = 0;
c10::Allocator* g_previous_allocator = nullptr;

}  // namespace

CpuMemoryTrackingScope::CpuMemoryTrackingScope() {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (g_install_depth == 0) {
    c10::Allocator* previous = c10::GetCPUAllocator();
    // Priority 0 is what LibTorch registers its default CPU allocator with.
    c10::SetCPUAllocator(&g_tracking_allocator, /*priority=*/0);
    if (c10::GetCPUAllocator() != &g_tracking_allocator) {
      throw Error("memory tracking: LibTorch kept a higher-priority CPU allocator in place");
    }
    g_previous_allocator = previous;
  }
  ++g_install_depth;
}

CpuMemoryTrackingScope::~CpuMemoryTrackingScope() {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (--g_install_depth == 0) {
    c10::SetCPUAllocator(g_previous_allocator, /*priority=*/0);
    g_previous_allocator = nullptr;
  }
}

bool cpu_tracking_installed() { return c10::GetCPUAllocator() == &g_tracking_allocator; }

CpuMemoryCounters cpu_memory_counters() {
  CpuMemoryCounters counters;
  counters.current_bytes = g_current.load(std::memory_order_relaxed);
  counters.peak_bytes = g_peak.load(std::memory_order_relaxed);
  counters.allocations = g_allocations.load(std::memory_order_relaxed);
  return counters;
}

void reset_cpu_peak() { g_peak.store(g_current.load(std::memory_order_relaxed)); }

}  // namespace tft::memory
