// linear_dropout_linear (nn/linear_dropout_linear.h), two grouped products with a dropout
// between them that keep the first one's input only: gradients against finite differences in
// double precision, with and without the dropout; the unfused operators (the products and
// Dropout, which draws the same mask) give the same output bits and gradients within the
// documented bound, in float32 and under bf16 autocast; the middle is not kept from forward to
// backward (the tracking allocator's count); bad shapes are named.
#include "nn/linear_dropout_linear.h"

#include "memory/memory_meter.h"
#include "nn/dropout.h"
#include "nn/precision.h"

#include <ATen/ops/baddbmm.h>
#include <torch/autograd.h>
#include <torch/types.h>

#include <cmath>
#include <string>
#include <cstdint>
#include <optional>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header
#include "support/finite_differences.h"

namespace {

struct Inputs {
  torch::Tensor x, w1, b1, w2, b2;
  std::vector<torch::Tensor> all() const { return {x, w1, b1, w2, b2}; }
};

// x [G, R, I], w1 [G, M, I], b1 [G, M], w2 [G, O, M], b2 [G, O], requiring grad.
Inputs make_inputs(std::int64_t groups, std::int64_t rows, std::int64_t in, std::int64_t mid,
                   std::int64_t out, torch::Dtype dtype) {
  torch::manual_seed(7);
  const auto opts = torch::TensorOptions().dtype(torch::kDouble);
  const auto make = [&](std::vector<std::int64_t> shape, double scale) {
    return (torch::randn(shape, opts) * scale).to(dtype).requires_grad_();
  };
  return {make({groups, rows, in}, 1.0), make({groups, mid, in}, 0.5), make({groups, mid}, 0.3),
          make({groups, out, mid}, 0.5), make({groups, out}, 0.3)};
}

// The same seed before every call: the dropout draws the same mask each time.
torch::Tensor fused(const Inputs& in, double p) {
  torch::manual_seed(123);
  return tft::linear_dropout_linear(in.x, in.w1, in.b1, in.w2, in.b2, p);
}

// The operators the function replaces: two products and a Dropout module between them.
torch::Tensor unfused(const Inputs& in, double p) {
  torch::manual_seed(123);
  tft::Dropout dropout(p);
  dropout->train();
  const torch::Tensor middle =
      dropout(at::baddbmm(in.b1.unsqueeze(1), in.x, in.w1.transpose(1, 2)));
  return at::baddbmm(in.b2.unsqueeze(1), middle, in.w2.transpose(1, 2));
}

// A fixed projection of the output, so one backward gives every input's gradient.
torch::Tensor loss_of(const torch::Tensor& out) {
  const torch::Tensor w = torch::linspace(-1, 1, out.numel(), out.options().dtype(torch::kFloat))
                              .view(out.sizes())
                              .to(out.scalar_type());
  return (out * w).sum().to(torch::kDouble) + (out * out).sum().to(torch::kDouble) * 0.1;
}

double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const double scale = b.to(torch::kDouble).abs().max().item<double>();
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>() /
         (scale > 0 ? scale : 1.0);
}

// Central differences of the loss against every element of every input, in double.
void check_against_finite_differences(double p) {
  const Inputs in = make_inputs(2, 5, 3, 4, 6, torch::kDouble);
  tft::testing::check_gradients_by_central_differences([&] { return loss_of(fused(in, p)); },
                                                       in.all(), "p " + std::to_string(p));
}

}  // namespace

TFT_TEST(gradients_match_finite_differences_in_double) {
  for (const double p : {0.0, 0.3}) check_against_finite_differences(p);
}

// The output has the unfused operators' bits (the same products, the same mask); the gradients
// are the same sums in another order, within 1e-6 of the largest in float32 and 1e-2 in
// bfloat16 (the products' dtype under bf16-mixed, where a gradient is rounded to 8 bits).
TFT_TEST(matches_the_unfused_operators) {
  for (const bool bf16 : {false, true}) {
    for (const double p : {0.0, 0.1}) {
      const Inputs in = make_inputs(3, 40, 16, 24, 32, torch::kFloat);
      torch::Tensor a, b;
      {
        std::optional<tft::AutocastScope> autocast;
        if (bf16) autocast.emplace(tft::Precision::Bf16Mixed, c10::DeviceType::CPU);
        a = fused(in, p);
        b = unfused(in, p);
      }
      assert_true(a.scalar_type() == (bf16 ? torch::kBFloat16 : torch::kFloat));
      if (!torch::equal(a, b)) {
        fail_msg("bf16 %d p %g: outputs differ by %g", bf16, p, relative_error(a, b));
      }
      const auto ga = torch::autograd::grad({loss_of(a)}, in.all());
      const auto gb = torch::autograd::grad({loss_of(b)}, in.all());
      for (std::size_t k = 0; k < ga.size(); ++k) {
        assert_true(ga[k].scalar_type() == torch::kFloat);
        const double error = relative_error(ga[k], gb[k]), bound = bf16 ? 1e-2 : 1e-6;
        if (!(error <= bound)) {
          fail_msg("bf16 %d p %g input %zu: relative error %g > %g", bf16, p, k, error, bound);
        }
      }
    }
  }
}

// Between forward and backward the unfused operators hold the middle ([G, R, M] floats) and,
// for the dropout, nothing else (its mask is regenerated); the function holds neither.
TFT_TEST(keeps_the_first_input_and_not_the_middle) {
  const std::int64_t groups = 2, rows = 256, mid = 64;
  const Inputs in = make_inputs(groups, rows, 32, mid, 16, torch::kFloat);
  const auto held = [&](bool fuse) {
    tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
    const std::int64_t before = meter.current_bytes();
    torch::Tensor out = fuse ? fused(in, 0.1) : unfused(in, 0.1);
    const torch::Tensor loss = loss_of(out);
    out.reset();  // only what backward needs stays
    const std::int64_t kept = meter.current_bytes() - before;
    torch::autograd::grad({loss}, in.all());
    return kept;
  };
  const std::int64_t middle_bytes = groups * rows * mid * 4;
  const std::int64_t fused_bytes = held(true), unfused_bytes = held(false);
  if (unfused_bytes - fused_bytes != middle_bytes) {
    fail_msg("kept %lld bytes fused, %lld unfused: expected %lld less", (long long)fused_bytes,
             (long long)unfused_bytes, (long long)middle_bytes);
  }
}

TFT_TEST(bad_shapes_are_named) {
  const Inputs in = make_inputs(2, 3, 4, 5, 6, torch::kFloat);
  TFT_ASSERT_THROWS_WITH(
      tft::linear_dropout_linear(in.x, in.w1.narrow(2, 0, 3), in.b1, in.w2, in.b2, 0.1), c10::Error,
      "shapes disagree");
  TFT_ASSERT_THROWS_WITH(tft::linear_dropout_linear(in.x[0], in.w1, in.b1, in.w2, in.b2, 0.1),
                         c10::Error, "expected x [G, R, I]");
  TFT_ASSERT_THROWS_WITH(tft::linear_dropout_linear(in.x, in.w1, in.b1, in.w2, in.b2, 1.0),
                         c10::Error, "dropout must be in [0, 1)");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradients_match_finite_differences_in_double),
      cmocka_unit_test(matches_the_unfused_operators),
      cmocka_unit_test(keeps_the_first_input_and_not_the_middle),
      cmocka_unit_test(bad_shapes_are_named),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
