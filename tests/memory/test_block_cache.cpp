// The CPU block cache behind the tracking allocator: freed large blocks come back for the
// next tensor of their size, the byte counts stay exact, small blocks and poor fits are left
// alone, the idle bytes stay bounded, and two threads can share it.
#include "memory/block_cache.h"
#include "memory/tracking_allocator.h"
#include "support/address_space.h"
#include "support/sanitizers.h"

#include <torch/types.h>

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using namespace tft::memory;

namespace {

// Every test runs with the cache on (sanitizer builds start with it off) and empty, and puts
// the setting back.
bool g_enabled_before = false;
std::optional<BlockCacheScope> g_scope;

int enable_cache(void**) {
  g_enabled_before = block_cache_enabled();
  set_block_cache_enabled(true);
  g_scope.emplace();
  return 0;
}

int restore_cache(void**) {
  g_scope.reset();  // the last scope releases the idle blocks
  assert_int_equal(block_cache_counters().idle_blocks, 0);
  set_block_cache_enabled(g_enabled_before);
  return 0;
}

constexpr std::int64_t kMiB = 1 << 20;

const void* data_of(std::int64_t bytes) { return torch::empty({bytes}, torch::kUInt8).data_ptr(); }

}  // namespace

// A training step's tensors of different sizes live at different times, so the step needs more
// blocks than its live peak. Here 12 MiB alone, then two of 8 MiB together: 28 MiB of blocks for
// a live peak of 16 MiB. Every block must still be there for the next step (under a bound of
// 9/8 of the live peak the 12 MiB block went back, and every step faulted it in again).
TFT_TEST(blocks_beyond_the_live_peak_come_back) {
  CpuMemoryTrackingScope tracking;
  const auto step = [] {
    data_of(12 * kMiB);
    auto first = torch::empty({8 * kMiB}, torch::kUInt8);
    auto second = torch::empty({8 * kMiB}, torch::kUInt8);
  };
  step();
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto before = block_cache_counters();
    step();
    const auto after = block_cache_counters();
    assert_int_equal(after.misses - before.misses, 0);
    assert_int_equal(after.hits - before.hits, 3);
    assert_int_equal(after.idle_blocks, 3);
  }
}

TFT_TEST(a_freed_block_serves_the_next_tensor_of_its_size) {
  CpuMemoryTrackingScope tracking;
  const auto before = cpu_memory_counters();
  const auto hits = block_cache_counters().hits;
  const void* first = data_of(4 * kMiB);  // freed at once, and kept
  assert_int_equal(block_cache_counters().idle_blocks, 1);
  const void* second = data_of(4 * kMiB);
  assert_ptr_equal(first, second);
  assert_int_equal(block_cache_counters().hits, hits + 1);
  // The tracked bytes are the tensors', not the cache's.
  assert_int_equal(cpu_memory_counters().current_bytes, before.current_bytes);
  {
    auto held = torch::empty({4 * kMiB}, torch::kUInt8);
    assert_int_equal(cpu_memory_counters().current_bytes - before.current_bytes, 4 * kMiB);
    assert_int_equal(block_cache_counters().idle_blocks, 0);
  }
}

TFT_TEST(small_blocks_and_poor_fits_are_left_alone) {
  CpuMemoryTrackingScope tracking;
  data_of(64 << 10);  // below kMinCachedBytes
  assert_int_equal(block_cache_counters().idle_blocks, 0);
  const void* large = data_of(8 * kMiB);
  const auto misses = block_cache_counters().misses;
  // Half the kept block would waste the other half: the request goes to the C library.
  auto half = torch::empty({4 * kMiB}, torch::kUInt8);
  assert_ptr_not_equal(half.data_ptr(), large);
  assert_int_equal(block_cache_counters().misses, misses + 1);
  assert_int_equal(block_cache_counters().idle_blocks, 1);
  // A request up to an eighth smaller takes it.
  auto near = torch::empty({8 * kMiB - kMiB / 2}, torch::kUInt8);
  assert_ptr_equal(near.data_ptr(), large);
}

TFT_TEST(idle_bytes_stay_below_the_most_ever_live) {
  CpuMemoryTrackingScope tracking;
  // Each size a fifth below the last, so none fits another: each freed block is kept, and
  // the oldest go back once the kept bytes would pass the bound (288 MiB here, while
  // the sizes add up to 710 MiB).
  double size = 144.0 * kMiB;
  for (int i = 0; i < 20; ++i, size *= 0.8) {
    data_of(static_cast<std::int64_t>(size));
    const auto counters = block_cache_counters();
    assert_true(counters.idle_bytes <= counters.limit_bytes);
    assert_true(counters.limit_bytes >= 144 * kMiB);
  }
  assert_true(block_cache_counters().idle_blocks > 5);
  assert_true(block_cache_counters().idle_blocks < 20);
  release_cached_blocks();
  assert_int_equal(block_cache_counters().idle_bytes, 0);
  assert_int_equal(block_cache_counters().idle_blocks, 0);
}

TFT_TEST(nothing_is_kept_outside_a_scope) {
  CpuMemoryTrackingScope tracking;
  g_scope.reset();
  data_of(2 * kMiB);
  assert_int_equal(block_cache_counters().idle_blocks, 0);
  {
    BlockCacheScope outer;
    BlockCacheScope inner;
    data_of(2 * kMiB);
    assert_int_equal(block_cache_counters().idle_blocks, 1);
  }
  assert_int_equal(block_cache_counters().idle_blocks, 0);
  g_scope.emplace();
}

TFT_TEST(disabled_keeps_nothing) {
  CpuMemoryTrackingScope tracking;
  data_of(2 * kMiB);
  assert_int_equal(block_cache_counters().idle_blocks, 1);
  set_block_cache_enabled(false);
  assert_int_equal(block_cache_counters().idle_blocks, 0);  // turning it off releases them
  data_of(2 * kMiB);
  assert_int_equal(block_cache_counters().idle_blocks, 0);
  set_block_cache_enabled(true);
}

TFT_TEST(two_threads_share_it_without_mixing_blocks) {
  CpuMemoryTrackingScope tracking;
  const auto before = cpu_memory_counters().current_bytes;
  // A block handed to both threads at once would show the other thread's value.
  auto work = [](std::uint8_t value, bool* intact) {
    for (int i = 0; i < 200; ++i) {
      auto t = torch::full({(1 + i % 3) * kMiB}, value, torch::kUInt8);
      *intact = *intact && t.eq(value).all().item<bool>();
    }
  };
  bool other_intact = true;
  bool this_intact = true;
  std::thread other(work, std::uint8_t{7}, &other_intact);
  work(std::uint8_t{9}, &this_intact);
  other.join();
  assert_true(other_intact);
  assert_true(this_intact);
  assert_int_equal(cpu_memory_counters().current_bytes, before);
  assert_true(block_cache_counters().hits > 0);
}

// Idle blocks give way when the C library runs out: under an address-space limit that leaves
// room for a new 96 MiB tensor only once the cache's three idle 64 MiB blocks are gone, the
// tensor is still made, and the cache is empty after it.
TFT_TEST(idle_blocks_go_back_when_memory_runs_out) {
#ifdef TFT_UNDER_ASAN
  skip();  // ASan's shadow reserves terabytes of address space
#endif
  CpuMemoryTrackingScope tracking;
  {
    auto a = torch::empty({64 * kMiB}, torch::kUInt8);
    auto b = torch::empty({64 * kMiB}, torch::kUInt8);
    auto c = torch::empty({64 * kMiB}, torch::kUInt8);
  }
  assert_int_equal(block_cache_counters().idle_blocks, 3);
  rlimit original{};
  assert_int_equal(getrlimit(RLIMIT_AS, &original), 0);
  rlimit limited = original;
  limited.rlim_cur = static_cast<rlim_t>(tft::testing::address_space_in_use() + 48 * kMiB);
  assert_int_equal(setrlimit(RLIMIT_AS, &limited), 0);
  bool made = false;
  try {
    auto large = torch::empty({96 * kMiB}, torch::kUInt8);  // fits no idle block: 64 < 96
    made = large.numel() == 96 * kMiB;
  } catch (const std::exception&) {
  }
  assert_int_equal(setrlimit(RLIMIT_AS, &original), 0);
  assert_true(made);
  assert_int_equal(block_cache_counters().idle_blocks, 1);  // the new tensor's, kept when freed
}

int main() {
  const struct CMUnitTest tests[] = {
      // First: the bound follows the most bytes ever live, which later tests raise.
      cmocka_unit_test_setup_teardown(blocks_beyond_the_live_peak_come_back, enable_cache,
                                      restore_cache),
      cmocka_unit_test_setup_teardown(a_freed_block_serves_the_next_tensor_of_its_size,
                                      enable_cache, restore_cache),
      cmocka_unit_test_setup_teardown(small_blocks_and_poor_fits_are_left_alone, enable_cache,
                                      restore_cache),
      cmocka_unit_test_setup_teardown(idle_bytes_stay_below_the_most_ever_live, enable_cache,
                                      restore_cache),
      cmocka_unit_test_setup_teardown(nothing_is_kept_outside_a_scope, enable_cache, restore_cache),
      cmocka_unit_test_setup_teardown(disabled_keeps_nothing, enable_cache, restore_cache),
      cmocka_unit_test_setup_teardown(two_threads_share_it_without_mixing_blocks, enable_cache,
                                      restore_cache),
      cmocka_unit_test_setup_teardown(idle_blocks_go_back_when_memory_runs_out, enable_cache,
                                      restore_cache),
  };
  return cmocka_run_group_tests_name("block_cache", tests, nullptr, nullptr);
}
