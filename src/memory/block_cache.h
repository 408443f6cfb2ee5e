// A cache of freed CPU memory blocks, so that the next step's tensors of the same sizes reuse
// them instead of asking the C library again.
//
// Why: a training step allocates and frees the same large tensors every step. glibc serves
// blocks above its mmap threshold (at most 32 MiB) with fresh mmap()s and trims the top of
// its heap back to the kernel, so each step faults its activations in again, page by page:
// on bench/configs/reference.yaml (`none`, 2 threads) 214,000 minor faults and 0.42 s of system
// time per step without this cache, about 100 and 0.005 s with it (docs/config.md, "CPU memory
// while training"). LibTorch's CUDA allocator caches for the same reason; its CPU allocator
// does not.
//
// While a BlockCacheScope lives, a freed block of at least kMinCachedBytes is kept; a request
// takes the smallest kept block that holds it and wastes at most an eighth of it. The kept bytes
// are bounded by twice the highest number of bytes ever live at once (set_live_high_water):
// a step's tensors of different sizes live at different times, so it needs more blocks than its
// live peak (1.64x on bench/configs/reference.yaml). Beyond the bound the least recently kept
// blocks go back. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tft::memory {

struct BlockCacheCounters {
  std::int64_t idle_bytes = 0;  // bytes of blocks kept and not in use
  std::int64_t idle_blocks = 0;
  std::int64_t limit_bytes = 0;  // the bound on idle_bytes: twice the most bytes ever live
  std::int64_t hits = 0;         // requests served from the cache since the process started
  std::int64_t misses = 0;       // requests of a cacheable size that were not
};

// Blocks smaller than this are left to the C library, whose arenas reuse them well.
inline constexpr std::size_t kMinCachedBytes = std::size_t{128} << 10;

// A kept block of at least `bytes` bytes, or null; *capacity is set to its size.
void* take_cached_block(std::size_t bytes, std::size_t* capacity);
// Keeps `block` (of `capacity` bytes, from c10::alloc_cpu) for reuse; false when it was not
// kept and the caller must free it.
bool keep_cached_block(void* block, std::size_t capacity);
// Raises the bound on idle bytes to `live_bytes` when that is higher.
void set_live_high_water(std::int64_t live_bytes);
// Frees every idle block.
void release_cached_blocks();
// Turns caching on or off (on by default unless built with a sanitizer, whose checks a cache
// would hide, or TFT_CPU_BLOCK_CACHE=0 is in the environment). Off releases the idle blocks.
void set_block_cache_enabled(bool enabled);
bool block_cache_enabled();
BlockCacheCounters block_cache_counters();

// Blocks are kept only while at least one of these lives, so the cache serves the code that
// allocates the same sizes over and over (a training run, the benchmark's steps) and nothing
// else; the last one to end releases the idle blocks, so the host's memory falls back when the
// run ends, as it did before there was a cache.
class BlockCacheScope {
 public:
  BlockCacheScope();
  ~BlockCacheScope();
  BlockCacheScope(const BlockCacheScope&) = delete;
  BlockCacheScope& operator=(const BlockCacheScope&) = delete;
};

}  // namespace tft::memory
