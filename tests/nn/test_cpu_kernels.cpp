// The vectorised pieces under the nn/ kernels: Philox blocks against ATen's engine (the dropout
// masks depend on it), the lane exp against the C library's, sums in their documented order, and
// dropout giving the same bits on every instruction set.
#include "nn/cpu_isa.h"
#include "nn/dropout.h"
#include "nn/lane_math.h"
#include "nn/philox_block.h"

#include <ATen/core/PhiloxRNGEngine.h>
#include <torch/autograd.h>
#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

namespace {

// The block generators give at::Philox4_32's numbers, counter after counter, also where the
// counter's low word wraps (first = 2^32 - 5) and above 2^32.
TFT_TEST(philox_blocks_give_atens_numbers) {
  const std::uint64_t seeds[] = {0, 1, 0xDEADBEEFCAFEBABEull, 67280421310721ull};
  const std::uint64_t firsts[] = {0, 7, (std::uint64_t{1} << 32) - 5, (std::uint64_t{1} << 40) + 3};
  for (const std::uint64_t seed : seeds) {
    for (const std::uint64_t first : firsts) {
      at::Philox4_32 engine(seed, /*subsequence=*/0, /*offset=*/first);
      std::uint32_t expected[tft::philox::kBlockNumbers];
      for (std::uint32_t& n : expected) n = engine();
      std::uint32_t got[tft::philox::kBlockNumbers];
      tft::philox::block_portable(seed, first, got);
      for (int i = 0; i < tft::philox::kBlockNumbers; ++i) assert_int_equal(got[i], expected[i]);
#ifdef TFT_CPU_X86
      if (tft::cpu_isa() == tft::CpuIsa::kAvx2) {
        tft::philox::block_avx2(seed, first, got);
        for (int i = 0; i < tft::philox::kBlockNumbers; ++i) assert_int_equal(got[i], expected[i]);
      }
#endif
    }
  }
}

// Within 2 ulp of e^x over the clamped range; the clamps and NaN as documented.
TFT_TEST(lane_exp_is_within_two_ulp) {
  double worst = 0;
  for (int k = 0; k <= 200000; ++k) {
    const float x = -87.0f + 175.0f * static_cast<float>(k) / 200000.0f;
    const double exact = std::exp(static_cast<double>(x));
    const double got = tft::lanes::exp(x);
    worst = std::max(worst, std::abs(got - exact) / exact);
  }
  std::printf("# lanes::exp: worst relative error %.3g (2 ulp = %.3g)\n", worst,
              2.0 * std::numeric_limits<float>::epsilon());
  assert_true(worst <= 2.0 * std::numeric_limits<float>::epsilon());
  assert_true(std::isnan(tft::lanes::exp(std::numeric_limits<float>::quiet_NaN())));
  assert_true(tft::lanes::exp(1000.0f) == tft::lanes::exp(88.0f));
  assert_true(std::isfinite(tft::lanes::exp(88.0f)));
  assert_true(tft::lanes::exp(-1000.0f) > 0.0f && tft::lanes::exp(-1000.0f) < 2e-38f);
  assert_true(tft::lanes::exp(0.0f) == 1.0f);
  // sigmoid's ends: 1 and (nearly) 0, never NaN.
  assert_true(tft::lanes::sigmoid(100.0f) == 1.0f);
  assert_true(tft::lanes::sigmoid(-100.0f) >= 0.0f && tft::lanes::sigmoid(-100.0f) < 1e-37f);
}

// Term j goes to partial sum j % kLanes, and the partial sums are added in a fixed tree, for any
// length (a tail, exactly one block, none at all).
TFT_TEST(lane_sums_add_in_their_documented_order) {
  for (const std::int64_t n : {0, 5, 16, 37, 160}) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j)
      v[j] = 1.0f / static_cast<float>(3 + j * 7 % 11) + 1e7f * (j % 3 == 0);
    float part[tft::lanes::kLanes] = {};
    for (std::int64_t j = 0; j < n; ++j) part[j % tft::lanes::kLanes] += v[j];
    for (std::int64_t half = tft::lanes::kLanes / 2; half > 0; half /= 2) {
      for (std::int64_t k = 0; k < half; ++k) part[k] += part[k + half];
    }
    const float got = tft::lanes::sum<float>(n, [&](std::int64_t j) { return v[j]; });
    assert_true(got == part[0]);
  }
}

// Dropout's forward and backward give the same bits on every instruction set, on a length that
// is not a multiple of a block (64 numbers), in float32 and bfloat16.
TFT_TEST(dropout_gives_the_same_bits_on_every_instruction_set) {
  tft::Dropout dropout(0.3);
  for (const torch::Dtype dtype : {torch::kFloat, torch::kBFloat16}) {
    auto run = [&] {
      torch::manual_seed(3);
      const torch::Tensor x = torch::randn({1001, 7}).to(dtype).requires_grad_();
      const torch::Tensor out = dropout(x);
      const torch::Tensor grad =
          torch::autograd::grad({(out.to(torch::kFloat) * 1.5).sum()}, {x})[0];
      return std::vector<torch::Tensor>{out.detach(), grad};
    };
    const std::vector<torch::Tensor> widest = run();
    const tft::ScopedCpuIsa isa(tft::CpuIsa::kBaseline);
    const std::vector<torch::Tensor> baseline = run();
    assert_true(widest[0].equal(baseline[0]));
    assert_true(widest[1].equal(baseline[1]));
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(philox_blocks_give_atens_numbers),
      cmocka_unit_test(lane_exp_is_within_two_ulp),
      cmocka_unit_test(lane_sums_add_in_their_documented_order),
      cmocka_unit_test(dropout_gives_the_same_bits_on_every_instruction_set),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
