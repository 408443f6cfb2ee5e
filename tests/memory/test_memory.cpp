// Memory measurement: exact byte counts from the tracking allocator, and the activation
// memory that checkpointing saves on a residual stack.
#include "common/error.h"
#include "memory/memory_meter.h"
#include "memory/tracking_allocator.h"
#include "model/residual_stack.h"

#include <c10/core/Allocator.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>

#include "support/cmocka_cpp.h"  // last: see the header

using namespace tft::memory;

TFT_TEST(counts_exact_bytes) {
  CpuMemoryTrackingScope scope;
  assert_true(cpu_tracking_installed());
  const auto before = cpu_memory_counters();
  {
    auto t = torch::empty({1000}, torch::kFloat);
    assert_int_equal(cpu_memory_counters().current_bytes - before.current_bytes, 4000);
    auto u = torch::empty({10, 10}, torch::kDouble);
    assert_int_equal(cpu_memory_counters().current_bytes - before.current_bytes, 4800);
    assert_true(cpu_memory_counters().peak_bytes >= before.current_bytes + 4800);
  }
  assert_int_equal(cpu_memory_counters().current_bytes, before.current_bytes);
}

TFT_TEST(peak_resets_to_current) {
  CpuMemoryTrackingScope scope;
  {
    auto big = torch::zeros({1 << 16});
  }
  reset_cpu_peak();
  const auto start = cpu_memory_counters();
  assert_int_equal(start.peak_bytes, start.current_bytes);
  {
    auto t = torch::ones({256});
  }
  assert_int_equal(cpu_memory_counters().peak_bytes - start.current_bytes, 1024);
}

TFT_TEST(tracking_stays_installed_so_raw_buffers_free_where_they_were_allocated) {
  assert_true(cpu_tracking_installed());  // from load time on
  torch::Tensor survivor;
  void* raw = nullptr;
  {
    CpuMemoryTrackingScope outer;
    {
      CpuMemoryTrackingScope inner;
      assert_true(cpu_tracking_installed());
    }
    survivor = torch::ones({512});  // outlives the scope
    // What LibTorch's oneDNN buffers do: allocate through the current CPU allocator ...
    raw = c10::GetAllocator(c10::DeviceType::CPU)->raw_allocate(4096);
  }
  assert_true(cpu_tracking_installed());
  // ... and free through the one current then: with the previous allocator put back this
  // was free() of a pointer inside our block (glibc aborts).
  c10::GetAllocator(c10::DeviceType::CPU)->raw_deallocate(raw);
  const auto held = cpu_memory_counters().current_bytes;
  survivor.reset();
  assert_int_equal(held - cpu_memory_counters().current_bytes, 2048);
  // Data written through the tracked allocation was real memory all along.
  auto t = torch::arange(100, torch::kFloat);
  assert_true(t.sum().item<double>() == 4950.0);
}

TFT_TEST(activation_probe_ignores_what_was_held_before) {
  MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
  auto weights = torch::ones({4096});
  ActivationProbe probe(meter);
  {
    auto activations = torch::ones({1024});
  }
  assert_int_equal(probe.activation_peak_bytes(), 4096);
  assert_true(probe.baseline_bytes() >= 4096 * 4);
}

TFT_TEST(unsupported_device_is_a_clear_error) {
#ifndef TFT_WITH_CUDA
  TFT_ASSERT_THROWS_WITH(MemoryMeter(c10::Device(c10::DeviceType::CUDA, 0)), tft::Error,
                         "not supported by this build");
#endif
}

// Peak activation bytes of one training step (forward + backward) of the stack.
static int64_t step_activation_peak(tft::ResidualStack& stack, bool checkpoint_all) {
  MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
  torch::manual_seed(5);
  auto x = torch::randn({32, 64, 64});
  stack->zero_grad();
  ActivationProbe probe(meter);
  auto y = stack->forward(x, [&](size_t) { return checkpoint_all; });
  y.pow(2).mean().backward();
  return probe.activation_peak_bytes();
}

TFT_TEST(checkpointing_every_block_cuts_the_activation_peak) {
  torch::manual_seed(1);
  tft::ResidualStack stack(64, 256, 8, 0.1);
  stack->train();
  // Gradients exist before measuring, so both runs start with the same bytes held.
  step_activation_peak(stack, false);
  const int64_t plain = step_activation_peak(stack, false);
  const int64_t checkpointed = step_activation_peak(stack, true);
  std::printf("  activation peak: none %lld bytes, all blocks checkpointed %lld bytes (%.1f%%)\n",
              static_cast<long long>(plain), static_cast<long long>(checkpointed),
              100.0 * checkpointed / plain);
  assert_true(plain > 0);
  assert_true(checkpointed * 10 <= plain * 4);  // at most 40% of the un-checkpointed peak
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counts_exact_bytes),
      cmocka_unit_test(peak_resets_to_current),
      cmocka_unit_test(tracking_stays_installed_so_raw_buffers_free_where_they_were_allocated),
      cmocka_unit_test(activation_probe_ignores_what_was_held_before),
      cmocka_unit_test(unsupported_device_is_a_clear_error),
      cmocka_unit_test(checkpointing_every_block_cuts_the_activation_peak),
  };
  return cmocka_run_group_tests_name("memory", tests, nullptr, nullptr);
}
