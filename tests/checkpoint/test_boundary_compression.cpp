// Compressed checkpoint boundaries: the bf16 and int8 round trips stay within their stated
// error, only activations (inputs that require grad) are compressed, float32 stays bitwise,
// the compressed ones give close gradients, and the guards of save_for_backward still hold.
#include "checkpoint/boundary_compression.h"
#include "checkpoint/recompute.h"

#include <torch/autograd.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::BoundaryDtype;
using tft::checkpoint::TensorVector;

namespace {

// Channels whose ranges differ by orders of magnitude, as hidden units' do; one all zero.
torch::Tensor channel_scaled(int64_t rows, int64_t steps, int64_t channels) {
  torch::manual_seed(3);
  auto scale = torch::logspace(-3, 2, channels);
  scale[1] = 0;
  return torch::randn({rows, steps, channels}) * scale;
}

double relative_l2(const torch::Tensor& got, const torch::Tensor& want) {
  return ((got - want).norm() / want.norm()).item<double>();
}

}  // namespace

TFT_TEST(bfloat16_round_trip_is_within_half_an_ulp) {
  const auto x = channel_scaled(4, 7, 16).requires_grad_(true);
  assert_true(tft::checkpoint::compresses(x, BoundaryDtype::kBFloat16));
  const auto kept = tft::checkpoint::compress(x, BoundaryDtype::kBFloat16);
  assert_true(kept.payload.scalar_type() == torch::kBFloat16);
  assert_false(kept.scales.defined());
  const auto back = tft::checkpoint::decompress(kept, torch::kFloat);
  assert_true(back.scalar_type() == torch::kFloat && back.sizes() == x.sizes());
  // bfloat16 keeps 8 significant bits: rounding errs by at most half an ulp, 2^-8 of the value.
  const auto error = (back - x.detach()).abs();
  assert_true((error <= x.detach().abs() * std::ldexp(1.0, -8)).all().item<bool>());
}

TFT_TEST(int8_round_trip_errs_at_most_half_a_step_per_channel) {
  const auto x = channel_scaled(4, 7, 16).requires_grad_(true);
  const auto kept = tft::checkpoint::compress(x, BoundaryDtype::kInt8);
  assert_true(kept.payload.scalar_type() == torch::kChar);
  assert_true(kept.payload.sizes() == x.sizes());
  assert_true(kept.scales.sizes() == torch::IntArrayRef({16}));
  const auto back = tft::checkpoint::decompress(kept, torch::kFloat);
  const auto range = x.detach().abs().amax({0, 1});
  const auto step = range / 127.0;
  const auto error = (back - x.detach()).abs().amax({0, 1});
  assert_true((error <= step * 0.5001 + 1e-30).all().item<bool>());
  assert_true(back.select(2, 1).eq(0).all().item<bool>());  // the zero channel stays zero
  // Each channel's extreme is exact (it defines the scale).
  assert_true(torch::allclose(back.abs().amax({0, 1}), range, 1e-6, 0));
}

// bf16-mixed: an activation that already is bfloat16 is kept as it is under bfloat16
// boundaries (never rounded twice); under int8 it is quantized with float32 scales and comes
// back as bfloat16.
TFT_TEST(bfloat16_activations_are_not_compressed_twice) {
  const auto x = channel_scaled(4, 7, 16).to(torch::kBFloat16).requires_grad_(true);
  assert_false(tft::checkpoint::compresses(x, BoundaryDtype::kBFloat16));
  assert_true(tft::checkpoint::compresses(x, BoundaryDtype::kInt8));
  const auto kept = tft::checkpoint::compress(x, BoundaryDtype::kInt8);
  assert_true(kept.scales.scalar_type() == torch::kFloat);
  const auto back = tft::checkpoint::decompress(kept, torch::kBFloat16);
  assert_true(back.scalar_type() == torch::kBFloat16);
  const auto exact = x.detach().to(torch::kFloat);
  const auto step = kept.scales.view({1, 1, -1});
  // Half an int8 step per channel, plus bfloat16's own rounding of the result.
  const auto bound = 0.5 * step + exact.abs() * (1.0 / 256) + 1e-30;
  assert_true(((back.to(torch::kFloat) - exact).abs() <= bound).all().item<bool>());
}

TFT_TEST(only_activations_that_need_gradients_are_compressed) {
  using tft::checkpoint::compresses;
  const auto activation = torch::randn({2, 3}).requires_grad_(true);
  assert_true(compresses(activation, BoundaryDtype::kInt8));
  assert_false(compresses(activation, BoundaryDtype::kFloat32));
  assert_false(compresses(torch::randn({2, 3}), BoundaryDtype::kInt8));  // batch data
  assert_false(compresses(torch::ones({2, 3}, torch::kLong), BoundaryDtype::kInt8));
  assert_false(compresses(torch::Tensor(), BoundaryDtype::kInt8));
  assert_false(compresses(torch::empty({0, 3}).requires_grad_(true), BoundaryDtype::kInt8));
  // Already 16 bits wide: nothing to gain from bfloat16, still something from int8.
  const auto half = torch::randn({2, 3}).to(torch::kBFloat16).requires_grad_(true);
  assert_false(compresses(half, BoundaryDtype::kBFloat16));
  assert_true(compresses(half, BoundaryDtype::kInt8));
}

TFT_TEST(a_tensor_kept_by_several_segments_is_compressed_once) {
  tft::checkpoint::BoundaryCache cache;
  const auto x = torch::randn({8, 16}).requires_grad_(true);
  auto h = x * 2;
  const auto first = cache.compress(h, BoundaryDtype::kInt8);
  const auto again = cache.compress(h, BoundaryDtype::kInt8);
  assert_true(first.payload.data_ptr() == again.payload.data_ptr());
  assert_true(first.scales.data_ptr() == again.scales.data_ptr());
  const auto other = cache.compress(x * 2, BoundaryDtype::kInt8);  // equal values, other tensor
  assert_true(other.payload.data_ptr() != first.payload.data_ptr());
  const auto bf16 = cache.compress(h, BoundaryDtype::kBFloat16);
  assert_true(bf16.payload.scalar_type() == torch::kBFloat16);
  {
    torch::NoGradGuard no_grad;
    h.mul_(3);  // a new version: the old copy is stale
  }
  const auto changed = cache.compress(h, BoundaryDtype::kInt8);
  assert_true(changed.payload.data_ptr() != first.payload.data_ptr());
  assert_true(torch::allclose(tft::checkpoint::decompress(changed, torch::kFloat), h.detach(), 0,
                              h.detach().abs().max().item<double>() / 127));
}

namespace {

struct SegmentRun {
  torch::Tensor output;
  TensorVector grads;  // input, then weight
};

// A two-layer segment over an activation, checkpointed with `boundary` (none: not at all).
SegmentRun run_segment(std::optional<BoundaryDtype> boundary, bool checkpointed = true) {
  torch::manual_seed(5);
  auto x = torch::randn({32, 24}, torch::requires_grad());
  auto w = (torch::randn({24, 24}) / std::sqrt(24.0)).requires_grad_(true);  // unit gain
  auto h = torch::tanh(x * 3);  // an activation: requires grad, not a leaf
  auto segment = [&](const TensorVector& in) {
    return TensorVector{torch::tanh(in[0].matmul(w)).matmul(w)};
  };
  tft::checkpoint::CheckpointOptions options;
  options.boundary = boundary;
  auto y =
      checkpointed ? tft::checkpoint::checkpoint(segment, {h}, {w}, options)[0] : segment({h})[0];
  (y * y).sum().backward();
  return {y.detach(), {x.grad().clone(), w.grad().clone()}};
}

}  // namespace

TFT_TEST(float32_boundaries_are_bitwise_and_compressed_ones_close) {
  const SegmentRun plain = run_segment(std::nullopt, /*checkpointed=*/false);
  const SegmentRun float32 = run_segment(BoundaryDtype::kFloat32);
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    assert_true(torch::equal(plain.grads[i], float32.grads[i]));
  }
  // Relative L2 error of each gradient through one well-conditioned segment (the model-level
  // bounds are in tests/model/test_compressed_boundaries.cpp).
  const struct {
    BoundaryDtype dtype;
    double bound;
  } cases[] = {{BoundaryDtype::kBFloat16, 1e-2}, {BoundaryDtype::kInt8, 5e-2}};
  for (const auto& c : cases) {
    const SegmentRun run = run_segment(c.dtype);
    assert_true(torch::equal(plain.output, run.output));  // the forward pass is untouched
    for (size_t i = 0; i < plain.grads.size(); ++i) {
      const double error = relative_l2(run.grads[i], plain.grads[i]);
      std::printf("  %s: gradient %zu relative L2 error %.2e (bound %.0e)\n",
                  tft::boundary_dtype_name(c.dtype).c_str(), i, error, c.bound);
      assert_true(error > 0 && error <= c.bound);
    }
  }
}

TFT_TEST(the_installed_dtype_applies_when_the_options_name_none) {
  assert_true(tft::checkpoint::current_boundary_dtype() == BoundaryDtype::kFloat32);
  const SegmentRun explicit_int8 = run_segment(BoundaryDtype::kInt8);
  SegmentRun scoped;
  {
    const tft::checkpoint::BoundaryDtypeScope scope(BoundaryDtype::kInt8);
    assert_true(tft::checkpoint::current_boundary_dtype() == BoundaryDtype::kInt8);
    scoped = run_segment(std::nullopt);
  }
  assert_true(tft::checkpoint::current_boundary_dtype() == BoundaryDtype::kFloat32);
  for (size_t i = 0; i < scoped.grads.size(); ++i) {
    assert_true(torch::equal(explicit_int8.grads[i], scoped.grads[i]));
  }
}

TFT_TEST(in_place_change_of_a_compressed_input_is_detected) {
  torch::nn::Linear layer(4, 4);
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto h = x * 2;
  tft::checkpoint::CheckpointOptions options;
  options.boundary = BoundaryDtype::kInt8;
  auto out = tft::checkpoint::checkpoint(
      [&](const TensorVector& in) { return TensorVector{layer(in[0])}; }, {h}, layer->parameters(),
      options);
  {
    torch::NoGradGuard no_grad;
    h.add_(1);  // the compressed input changed after forward
  }
  TFT_ASSERT_THROWS_WITH(out[0].sum().backward(), c10::Error, "inplace operation");
}

TFT_TEST(higher_order_gradients_need_float32_boundaries) {
  auto w = torch::randn({5}, torch::requires_grad());
  auto x = torch::linspace(-1, 1, 5).requires_grad_(true);
  auto h = x * 1.5;
  tft::checkpoint::CheckpointOptions options;
  options.boundary = BoundaryDtype::kBFloat16;
  auto y = tft::checkpoint::checkpoint(
      [&](const TensorVector& in) { return TensorVector{(in[0].pow(3) * w).sin()}; }, {h}, {w},
      options)[0];
  TFT_ASSERT_THROWS_WITH(torch::autograd::grad({y.sum()}, {x}, {}, true, /*create_graph=*/true),
                         c10::Error, "need float32 boundaries");
}

// Inputs past CheckpointOptions::compressible_inputs are kept exactly: a weight handed in as an
// input (parameters stacked once per step, model/segment.h) is not rounded to the boundary
// dtype. The activation holds bfloat16 values, so its own compression loses nothing: with the
// weight kept exact the gradients are bitwise those of a float32 boundary.
TFT_TEST(inputs_past_the_compressible_ones_are_kept_exact) {
  const auto run = [](BoundaryDtype dtype, std::size_t compressible) {
    torch::manual_seed(5);
    const auto x = torch::randn({3, 4, 8}).to(torch::kBFloat16).to(torch::kFloat);
    x.requires_grad_(true);
    const auto w = torch::randn({8, 8}, torch::requires_grad());
    const auto h = x * 2;        // an activation, still bfloat16-exact
    const auto stacked = w * 1;  // made from a parameter, as a stack is
    tft::checkpoint::CheckpointOptions options;
    options.boundary = dtype;
    options.compressible_inputs = compressible;
    const auto y = tft::checkpoint::checkpoint(
        [](const TensorVector& in) { return TensorVector{at::matmul(in[0], in[1]).tanh()}; },
        {h, stacked}, {}, options)[0];
    (y * y).sum().backward();
    return std::vector<torch::Tensor>{x.grad().clone(), w.grad().clone()};
  };
  const auto exact = run(BoundaryDtype::kFloat32, SIZE_MAX);
  const auto all_compressed = run(BoundaryDtype::kBFloat16, SIZE_MAX);
  const auto weight_exact = run(BoundaryDtype::kBFloat16, 1);
  for (size_t i = 0; i < exact.size(); ++i) {
    assert_false(torch::equal(all_compressed[i], exact[i]));  // the weight was rounded
    assert_true(torch::equal(weight_exact[i], exact[i]));
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bfloat16_round_trip_is_within_half_an_ulp),
      cmocka_unit_test(int8_round_trip_errs_at_most_half_a_step_per_channel),
      cmocka_unit_test(bfloat16_activations_are_not_compressed_twice),
      cmocka_unit_test(only_activations_that_need_gradients_are_compressed),
      cmocka_unit_test(a_tensor_kept_by_several_segments_is_compressed_once),
      cmocka_unit_test(float32_boundaries_are_bitwise_and_compressed_ones_close),
      cmocka_unit_test(the_installed_dtype_applies_when_the_options_name_none),
      cmocka_unit_test(in_place_change_of_a_compressed_input_is_detected),
      cmocka_unit_test(higher_order_gradients_need_float32_boundaries),
      cmocka_unit_test(inputs_past_the_compressible_ones_are_kept_exact),
  };
  return cmocka_run_group_tests_name("boundary compression", tests, nullptr, nullptr);
}
