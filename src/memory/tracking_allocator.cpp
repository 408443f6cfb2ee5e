#include "memory/tracking_allocator.h"

#include "common/error.h"
#include "memory/block_cache.h"
#include "common/torch_compat.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <mutex>
#include <new>

namespace tft::memory {
namespace {

// Each block starts with a header holding the tensor's size, the block's (from the block cache
// it may be larger) and its account (a reference that keeps the account alive while the block
// lives), so freeing needs no lookup table. The header is one alignment unit wide, so the data
// pointer keeps c10's 64-byte alignment.
struct BlockHeader {
  std::size_t bytes;
  std::size_t capacity;
  std::shared_ptr<CpuMemoryAccount> account;
};
constexpr std::size_t kHeaderBytes = 64;
static_assert(kHeaderBytes >= sizeof(BlockHeader));

// Counters of live and peak bytes; the process-wide set and every account use one of these.
// Returns the new current count.
std::int64_t add_bytes(std::atomic<std::int64_t>& current, std::atomic<std::int64_t>& peak_bytes,
                       std::int64_t bytes) {
  const std::int64_t now = current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return now;
}

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};

void count_allocation(std::int64_t bytes) {
  set_live_high_water(add_bytes(g_current, g_peak, bytes));
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

// A block from the C library. When it has none (RLIMIT_AS, a cgroup), the block cache's idle
// blocks go back to it and the request is tried once more, as LibTorch's CUDA allocator frees its
// cached blocks before it reports out of memory: memory held for reuse must not turn a step that
// fits into an out-of-memory error. A second failure propagates (c10's "not enough memory" error,
// which the library reports as out of memory).
void* fresh_block(std::size_t bytes) {
  try {
    return c10::alloc_cpu(bytes);
  } catch (const c10::Error&) {
    if (block_cache_counters().idle_blocks == 0) throw;
    release_cached_blocks();
    return c10::alloc_cpu(bytes);
  }
}

class TrackingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t bytes) TFT_ALLOCATE_CONST override {
    std::size_t capacity = bytes + kHeaderBytes;
    void* block = take_cached_block(capacity, &capacity);
    if (block == nullptr) block = fresh_block(capacity);
    auto* header =
        new (block) BlockHeader{bytes, capacity, ThreadSlot<CpuMemoryAccount>::current()};
    void* data = static_cast<char*>(block) + kHeaderBytes;
    count_allocation(static_cast<std::int64_t>(bytes));
    if (header->account) header->account->count_allocation(static_cast<std::int64_t>(bytes));
    // LibTorch requires data == context for an allocator with a raw_deleter.
    return {data, data, &deallocate, c10::Device(c10::DeviceType::CPU)};
  }

  static void deallocate(void* data) {
    if (data == nullptr) return;
    void* block = static_cast<char*>(data) - kHeaderBytes;
    auto* header = static_cast<BlockHeader*>(block);
    const auto bytes = static_cast<std::int64_t>(header->bytes);
    const std::size_t capacity = header->capacity;
    g_current.fetch_sub(bytes, std::memory_order_relaxed);
    if (header->account) header->account->count_free(bytes);
    header->~BlockHeader();
    if (!keep_cached_block(block, capacity)) c10::free_cpu(block);
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

// Installs the tracking allocator unless it is in place; never puts the previous one back.
// LibTorch's oneDNN integration allocates and frees its raw buffers through whichever CPU
// allocator is current at each call (c10::GetAllocator(CPU)->raw_allocate/raw_deallocate),
// so swapping allocators while such a buffer lives hands its free to an allocator that did
// not allocate it: free() of a pointer inside one of our blocks, seen as glibc's "free():
// invalid pointer" when two trainers measured on different threads. Installed once, as early
// as this library loads, there is no such window.
void install() {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (c10::GetCPUAllocator() == &g_tracking_allocator) return;
  // Priority 0 is what LibTorch registers its default CPU allocator with.
  c10::SetCPUAllocator(&g_tracking_allocator, /*priority=*/0);
  if (c10::GetCPUAllocator() != &g_tracking_allocator) {
    throw Error("memory tracking: LibTorch kept a higher-priority CPU allocator in place");
  }
}

// At load time, after LibTorch's own registration (its libraries initialise first).
[[maybe_unused]] const bool g_installed_at_load = [] {
  try {
    install();
    return true;
  } catch (const Error&) {
    return false;  // CpuMemoryTrackingScope reports it where measuring is asked for
  }
}();

}  // namespace

CpuMemoryCounters CpuMemoryAccount::counters() const {
  CpuMemoryCounters counters;
  counters.current_bytes = current_.load(std::memory_order_relaxed);
  counters.peak_bytes = peak_.load(std::memory_order_relaxed);
  counters.allocations = allocations_.load(std::memory_order_relaxed);
  return counters;
}

void CpuMemoryAccount::reset_peak() { peak_.store(current_.load(std::memory_order_relaxed)); }

void CpuMemoryAccount::count_allocation(std::int64_t bytes) {
  add_bytes(current_, peak_, bytes);
  allocations_.fetch_add(1, std::memory_order_relaxed);
}

void CpuMemoryAccount::count_free(std::int64_t bytes) {
  current_.fetch_sub(bytes, std::memory_order_relaxed);
}

std::shared_ptr<CpuMemoryAccount> current_cpu_memory_account() {
  return ThreadSlot<CpuMemoryAccount>::current();
}

CpuMemoryTrackingScope::CpuMemoryTrackingScope() { install(); }

CpuMemoryTrackingScope::~CpuMemoryTrackingScope() = default;

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
