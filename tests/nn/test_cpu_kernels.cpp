// The vectorised pieces under the nn/ kernels: Philox blocks against ATen's engine (the dropout
// masks depend on it), the lane exp against the C library's, sums in their documented order, the
// lane bfloat16 rounding against c10's, and dropout giving the same bits on every instruction
// set and ATen's own products.
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

// lanes::narrow rounds a float to bfloat16 as c10::BFloat16 does, without its branch: on every
// float class (zeros, subnormals, ties to even, the largest finite values, infinities, NaNs) and
// on a sweep of bit patterns.
TFT_TEST(lane_bfloat16_rounding_is_c10s) {
  std::vector<float> values{0.0f,
                            -0.0f,
                            1.0f,
                            -1.5f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            __builtin_bit_cast(float, std::uint32_t{0x3F808000}),  // a tie, to even
                            __builtin_bit_cast(float, std::uint32_t{0x3F818000}),  // a tie, up
                            __builtin_bit_cast(float, std::uint32_t{0x7F7FFFFF})};
  for (std::uint32_t bits = 0; bits < 0xFFFF0000u; bits += 0x00010001u * 977u) {
    values.push_back(__builtin_bit_cast(float, bits));
  }
  for (const float v : values) {
    const c10::BFloat16 ours = tft::lanes::narrow<c10::BFloat16>(v);
    const c10::BFloat16 theirs(v);
    if (ours.x != theirs.x) {
      fail_msg("%a (0x%08x): 0x%04x, c10 0x%04x", static_cast<double>(v),
               __builtin_bit_cast(std::uint32_t, v), ours.x, theirs.x);
    }
    assert_true(tft::lanes::widen(ours) == static_cast<float>(ours) ||
                std::isnan(static_cast<float>(ours)));
  }
}

// Dropout's products equal ATen's own multiplication by the mask, bit for bit, in bfloat16, half
// and float: the mask alone (philox_dropout_mask) and x times it in place (times_dropout_mask_)
// from the same seed, against x * mask, where ATen widens, multiplies and rounds. A NaN is a NaN
// in both (inf * 0 here), its sign bit aside: c10's scalar rounding, which dropout's products
// have always had, makes every NaN 0x7FC0, where ATen's vector one keeps the sign.
TFT_TEST(dropout_products_equal_atens_multiplication) {
  for (const torch::Dtype dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf}) {
    torch::manual_seed(5);
    torch::Tensor x = (torch::randn({1003}) * 1000).to(dtype);
    x[0] = std::numeric_limits<float>::infinity();
    x[1] = std::numeric_limits<float>::quiet_NaN();
    x[2] = -0.0f;
    torch::manual_seed(11);
    const std::uint64_t seed = tft::draw_dropout_seed();
    torch::manual_seed(11);
    const torch::Tensor mask = tft::philox_dropout_mask(x, 0.3);  // drawn with `seed`
    torch::Tensor y = x.clone();
    tft::times_dropout_mask_(y, 0.3, seed);
    const torch::Tensor expected = x * mask;
    const auto bits = [](const torch::Tensor& t) {
      return t.view(t.element_size() == 2 ? torch::kShort : torch::kInt);
    };
    const torch::Tensor nan = expected.isnan();
    assert_true(y.isnan().equal(nan));
    assert_true(nan.any().item<bool>());
    const torch::Tensor differ = ((bits(y) != bits(expected)) & ~nan).nonzero();
    if (differ.numel() > 0) {
      const std::int64_t i = differ[0].item<std::int64_t>();
      fail_msg("%s: %lld elements differ, first %lld: x %g, mask %g, ours 0x%x, ATen's 0x%x",
               c10::toString(dtype), static_cast<long long>(differ.numel()),
               static_cast<long long>(i), x[i].item<double>(), mask[i].item<double>(),
               bits(y)[i].item<int>(), bits(expected)[i].item<int>());
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(philox_blocks_give_atens_numbers),
      cmocka_unit_test(lane_exp_is_within_two_ulp),
      cmocka_unit_test(lane_sums_add_in_their_documented_order),
      cmocka_unit_test(dropout_gives_the_same_bits_on_every_instruction_set),
      cmocka_unit_test(lane_bfloat16_rounding_is_c10s),
      cmocka_unit_test(dropout_products_equal_atens_multiplication),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
