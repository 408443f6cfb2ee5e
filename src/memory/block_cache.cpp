#include "memory/block_cache.h"

#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#define TFT_BLOCK_CACHE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define TFT_BLOCK_CACHE_SANITIZED 1
#endif
#endif

namespace tft::memory {
namespace {

bool enabled_at_start() {
#ifdef TFT_BLOCK_CACHE_SANITIZED
  return false;  // a reused block would hide a use after free from the sanitizer
#else
  const char* setting = std::getenv("TFT_CPU_BLOCK_CACHE");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
#endif
}

class BlockCache {
 public:
  void* take(std::size_t bytes, std::size_t* capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = by_capacity_.lower_bound(bytes);
    if (found == by_capacity_.end() || found->first - bytes > bytes / 8) {
      ++misses_;
      return nullptr;
    }
    const auto idle = found->second;
    void* block = idle->block;
    *capacity = idle->capacity;
    idle_bytes_ -= static_cast<std::int64_t>(idle->capacity);
    by_capacity_.erase(found);
    recency_.erase(idle);
    ++hits_;
    return block;
  }

  bool keep(void* block, std::size_t capacity) {
    if (!enabled_.load(std::memory_order_relaxed)) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_scopes_ == 0) return false;
    const auto bytes = static_cast<std::int64_t>(capacity);
    if (bytes > limit_) return false;
    while (idle_bytes_ + bytes > limit_) free_least_recent();
    recency_.push_front(IdleBlock{block, capacity});
    by_capacity_.emplace(capacity, recency_.begin());
    idle_bytes_ += bytes;
    return true;
  }

  void raise_limit(std::int64_t live_bytes) {
    // Read without the lock first: this runs on every allocation and rarely changes anything.
    if (live_bytes <= live_high_water_seen_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_bytes > live_high_water_seen_.load(std::memory_order_relaxed)) {
      live_high_water_seen_.store(live_bytes, std::memory_order_relaxed);
      // A step needs more blocks than its live peak: tensors of different sizes live at
      // different times, and a block serves only sizes within an eighth of its own. On
      // bench/configs/reference.yaml `none`'s blocks add up to 1.64x its live peak; under a
      // bound of 9/8 about 60 large blocks a step went back and were faulted in again (79,000
      // faults a step; the step ran 3-8% slower).
      limit_ = 2 * live_bytes;
    }
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!recency_.empty()) free_least_recent();
  }

  void open_scope() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++open_scopes_;
  }

  void close_scope() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--open_scopes_ > 0) return;
    while (!recency_.empty()) free_least_recent();
  }

  void set_enabled(bool enabled) {
    enabled_.store(enabled, std::memory_order_relaxed);
    if (!enabled) release();
  }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  BlockCacheCounters counters() {
    std::lock_guard<std::mutex> lock(mutex_);
    BlockCacheCounters counters;
    counters.idle_bytes = idle_bytes_;
    counters.idle_blocks = static_cast<std::int64_t>(recency_.size());
    counters.limit_bytes = limit_;
    counters.hits = hits_;
    counters.misses = misses_;
    return counters;
  }

 private:
  struct IdleBlock {
    void* block;
    std::size_t capacity;
  };
  using Recency = std::list<IdleBlock>;  // most recently kept first

  // Requires mutex_.
  void free_least_recent() {
    const auto oldest = std::prev(recency_.end());
    auto [first, last] = by_capacity_.equal_range(oldest->capacity);
    while (first->second != oldest) ++first;  // it is there: every kept block is in both
    by_capacity_.erase(first);
    idle_bytes_ -= static_cast<std::int64_t>(oldest->capacity);
    c10::free_cpu(oldest->block);
    recency_.erase(oldest);
  }

  std::mutex mutex_;
  Recency recency_;
  std::multimap<std::size_t, Recency::iterator> by_capacity_;
  std::int64_t idle_bytes_ = 0;
  int open_scopes_ = 0;
  std::int64_t limit_ = 0;  // the bound on idle_bytes_
  std::atomic<std::int64_t> live_high_water_seen_{0};
  std::int64_t hits_ = 0;
  std::int64_t misses_ = 0;
  std::atomic<bool> enabled_{enabled_at_start()};
};

// Never destroyed: tensors freed during static destruction still reach it. Its idle blocks at
// exit stay reachable, so leak checkers do not report them.
BlockCache& cache() {
  static auto* instance = new BlockCache();
  return *instance;
}

}  // namespace

void* take_cached_block(std::size_t bytes, std::size_t* capacity) {
  if (bytes < kMinCachedBytes || !cache().enabled()) return nullptr;
  return cache().take(bytes, capacity);
}

bool keep_cached_block(void* block, std::size_t capacity) {
  return capacity >= kMinCachedBytes && cache().keep(block, capacity);
}

void set_live_high_water(std::int64_t live_bytes) { cache().raise_limit(live_bytes); }

void release_cached_blocks() { cache().release(); }

void set_block_cache_enabled(bool enabled) { cache().set_enabled(enabled); }

bool block_cache_enabled() { return cache().enabled(); }

BlockCacheCounters block_cache_counters() { return cache().counters(); }

BlockCacheScope::BlockCacheScope() { cache().open_scope(); }

BlockCacheScope::~BlockCacheScope() { cache().close_scope(); }

}  // namespace tft::memory
