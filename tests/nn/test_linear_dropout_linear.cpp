// linear_dropout_linear (nn/linear_dropout_linear.h), two grouped products with a dropout
// between them that keep the first one's input only: gradients against finite differences in
// double precision, with and without the dropout; the unfused operators (the products and
// Dropout, which draws the same mask) give the same output bits and gradients within the
// documented bound, in float32 and under bf16 autocast; the middle is not kept from forward to
// backward (the tracking allocator's count); bad shapes are named. The same for the variable
// selection's form, whose affine groups' rows and ELU are made inside and not kept either. In a
// checkpointed segment's rerun the middle is kept for the backward that follows at once, which
// then makes it with no product, and the gradients keep their bits.
#include "nn/linear_dropout_linear.h"

#include "checkpoint/recompute.h"
#include "common/operator_counter.h"
#include "memory/memory_meter.h"
#include "nn/dropout.h"
#include "nn/precision.h"

#include <ATen/ops/addcmul.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/elu.h>
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

// The gradients of every float32 input from two outputs of the same function (fused and
// unfused), within 1e-6 of the largest in float32 and 1e-2 in bfloat16 (the products' dtype
// under bf16-mixed, where a gradient is rounded to 8 bits): the same sums in another order.
void expect_same_gradients(const torch::Tensor& a, const torch::Tensor& b,
                           const std::vector<torch::Tensor>& inputs, bool bf16,
                           const std::string& label) {
  const auto ga = torch::autograd::grad({loss_of(a)}, inputs);
  const auto gb = torch::autograd::grad({loss_of(b)}, inputs);
  for (std::size_t k = 0; k < ga.size(); ++k) {
    assert_true(ga[k].scalar_type() == torch::kFloat);
    const double error = relative_error(ga[k], gb[k]), bound = bf16 ? 1e-2 : 1e-6;
    if (!(error <= bound)) {
      fail_msg("%s input %zu: relative error %g > %g", label.c_str(), k, error, bound);
    }
  }
}

// Central differences of the loss against every element of every input, in double.
void check_against_finite_differences(double p) {
  const Inputs in = make_inputs(2, 5, 3, 4, 6, torch::kDouble);
  tft::testing::check_gradients_by_central_differences([&] { return loss_of(fused(in, p)); },
                                                       in.all(), "p " + std::to_string(p));
}

// The variable selection's form: Ga groups of rows affine in one number (scalars [Ga, R], weight
// and bias [Ga, I]) and Gd dense groups already through their ELU ([Gd, R, I]), then the products.
struct AffineInputs {
  torch::Tensor scalars, weight, bias, dense, w1, b1, w2, b2;
  std::vector<torch::Tensor> all() const {
    std::vector<torch::Tensor> inputs{scalars, weight, bias, w1, b1, w2, b2};
    if (dense.size(0) > 0) inputs.push_back(dense);
    return inputs;
  }
};

AffineInputs make_affine_inputs(std::int64_t affine_groups, std::int64_t dense_groups,
                                std::int64_t rows, std::int64_t in, std::int64_t mid,
                                std::int64_t out, torch::Dtype dtype) {
  const Inputs products = make_inputs(affine_groups + dense_groups, rows, in, mid, out, dtype);
  const auto opts = torch::TensorOptions().dtype(torch::kDouble);
  const auto make = [&](std::vector<std::int64_t> shape, double scale) {
    return (torch::randn(shape, opts) * scale).to(dtype).requires_grad_();
  };
  // Dense rows as their ELU leaves them: above -1.
  const torch::Tensor dense =
      torch::elu(torch::randn({dense_groups, rows, in}, opts)).to(dtype).requires_grad_();
  return {make({affine_groups, rows}, 1.0),
          make({affine_groups, in}, 0.8),
          make({affine_groups, in}, 0.5),
          dense,
          products.w1,
          products.b1,
          products.w2,
          products.b2};
}

torch::Tensor fused_affine(const AffineInputs& in, double p, at::ScalarType dtype) {
  torch::manual_seed(123);
  return tft::linear_dropout_linear({in.scalars, in.weight, in.bias}, in.dense, in.w1, in.b1, in.w2,
                                    in.b2, p, dtype);
}

// What the variable selection ran before the function made the affine rows itself: the rows,
// the cast, the ELU in place, the dense groups after them, and the two products with a Dropout.
torch::Tensor unfused_affine(const AffineInputs& in, double p, at::ScalarType dtype) {
  torch::Tensor rows =
      at::addcmul(in.bias.unsqueeze(1), in.scalars.unsqueeze(-1), in.weight.unsqueeze(1));
  if (rows.scalar_type() != dtype) rows = rows.to(dtype);
  at::elu_(rows);
  const torch::Tensor x = in.dense.size(0) > 0 ? torch::cat({rows, in.dense.to(dtype)}, 0) : rows;
  return unfused({x, in.w1, in.b1, in.w2, in.b2}, p);
}

}  // namespace

TFT_TEST(gradients_match_finite_differences_in_double) {
  for (const double p : {0.0, 0.3}) check_against_finite_differences(p);
}

// The output has the unfused operators' bits (the same products, the same mask); the gradients
// are within expect_same_gradients' bound.
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
      expect_same_gradients(a, b, in.all(), bf16,
                            "bf16 " + std::to_string(bf16) + " p " + std::to_string(p));
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

// The affine form, every input's gradient against central differences in double: with and
// without dense groups, with and without the dropout.
TFT_TEST(affine_form_gradients_match_finite_differences_in_double) {
  for (const std::int64_t dense_groups : {0, 2}) {
    for (const double p : {0.0, 0.3}) {
      const AffineInputs in = make_affine_inputs(2, dense_groups, 5, 3, 4, 6, torch::kDouble);
      tft::testing::check_gradients_by_central_differences(
          [&] { return loss_of(fused_affine(in, p, torch::kDouble)); }, in.all(),
          "affine, dense groups " + std::to_string(dense_groups) + ", p " + std::to_string(p));
    }
  }
}

// The affine form against the operators it replaces: the same output bits (the same operators
// in forward), the gradients within the bound of the plain form, in float32 and under bf16
// autocast, where the rows are cast to bfloat16 before their ELU.
TFT_TEST(affine_form_matches_the_unfused_operators) {
  for (const bool bf16 : {false, true}) {
    for (const std::int64_t dense_groups : {0, 1}) {
      const double p = 0.1;
      const AffineInputs in = make_affine_inputs(3, dense_groups, 40, 16, 24, 32, torch::kFloat);
      const at::ScalarType dtype = bf16 ? torch::kBFloat16 : torch::kFloat;
      torch::Tensor a, b;
      {
        std::optional<tft::AutocastScope> autocast;
        if (bf16) autocast.emplace(tft::Precision::Bf16Mixed, c10::DeviceType::CPU);
        a = fused_affine(in, p, dtype);
        b = unfused_affine(in, p, dtype);
      }
      if (!torch::equal(a, b)) {
        fail_msg("bf16 %d dense %lld: outputs differ by %g", bf16,
                 static_cast<long long>(dense_groups), relative_error(a, b));
      }
      expect_same_gradients(
          a, b, in.all(), bf16,
          "bf16 " + std::to_string(bf16) + " dense " + std::to_string(dense_groups));
    }
  }
}

// From forward to backward the operators it replaces keep the affine groups' ELU output
// ([Ga, R, I]) and the middle ([Ga, R, M]); the function keeps neither.
TFT_TEST(affine_form_keeps_neither_the_rows_nor_the_middle) {
  const std::int64_t groups = 2, rows = 256, in_width = 32, mid = 64;
  const AffineInputs in = make_affine_inputs(groups, 0, rows, in_width, mid, 16, torch::kFloat);
  const auto held = [&](bool fuse) {
    tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
    const std::int64_t before = meter.current_bytes();
    torch::Tensor out =
        fuse ? fused_affine(in, 0.1, torch::kFloat) : unfused_affine(in, 0.1, torch::kFloat);
    const torch::Tensor loss = loss_of(out);
    out.reset();
    const std::int64_t kept = meter.current_bytes() - before;
    torch::autograd::grad({loss}, in.all());
    return kept;
  };
  const std::int64_t expected = groups * rows * (in_width + mid) * 4;
  const std::int64_t fused_bytes = held(true), unfused_bytes = held(false);
  if (unfused_bytes - fused_bytes != expected) {
    fail_msg("kept %lld bytes fused, %lld unfused: expected %lld less", (long long)fused_bytes,
             (long long)unfused_bytes, (long long)expected);
  }
}

TFT_TEST(affine_form_bad_shapes_are_named) {
  const AffineInputs in = make_affine_inputs(2, 1, 3, 4, 5, 6, torch::kFloat);
  TFT_ASSERT_THROWS_WITH(
      tft::linear_dropout_linear({in.scalars, in.weight.narrow(1, 0, 3), in.bias}, in.dense, in.w1,
                                 in.b1, in.w2, in.b2, 0.1, torch::kFloat),
      c10::Error, "expected affine rows");
  TFT_ASSERT_THROWS_WITH(
      tft::linear_dropout_linear({in.scalars, in.weight, in.bias}, in.dense.narrow(1, 0, 2), in.w1,
                                 in.b1, in.w2, in.b2, 0.1, torch::kFloat),
      c10::Error, "the dense groups' x must be");
  TFT_ASSERT_THROWS_WITH(
      tft::linear_dropout_linear({in.scalars, in.weight, in.bias}, in.dense.narrow(0, 0, 0), in.w1,
                                 in.b1, in.w2, in.b2, 0.1, torch::kFloat),
      c10::Error, "shapes disagree");
}

// Checkpointed, the function runs twice before its backward (forward, rerun) and makes its middle
// in both; the rerun keeps it, so backward computes no third one: the rerun's backward has the two
// products of the rerun alone where the plain function's backward has one. The gradients have the
// plain function's bits, in both forms.
TFT_TEST(a_rerun_keeps_the_middle_for_its_backward) {
  for (const bool affine : {false, true}) {
    const Inputs in = make_inputs(2, 64, 16, 24, 8, torch::kFloat);
    const AffineInputs ain = make_affine_inputs(2, 1, 64, 16, 24, 8, torch::kFloat);
    const std::vector<torch::Tensor> params = affine ? ain.all() : in.all();
    const auto run = [&] {
      return affine ? fused_affine(ain, 0.1, torch::kFloat) : fused(in, 0.1);
    };
    // Gradients, and the products (baddbmm: the middle and the output) the backward ran.
    const auto gradients = [&](bool checkpointed, std::int64_t& backward_products) {
      torch::Tensor loss;
      if (checkpointed) {
        torch::manual_seed(5);  // fused() seeds its own dropout; this is the rerun's RNG state
        loss = tft::checkpoint::checkpoint(
            [&](const tft::checkpoint::TensorVector&) {
              return tft::checkpoint::TensorVector{loss_of(run())};
            },
            {}, params)[0];
      } else {
        loss = loss_of(run());
      }
      tft::OperatorCounter counter("backward");
      const std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, params);
      const auto calls = counter.calls_by_operator();
      const auto found = calls.find("aten::baddbmm");
      backward_products = found == calls.end() ? 0 : found->second;
      return grads;
    };
    std::int64_t plain_products = 0, rerun_products = 0;
    const std::vector<torch::Tensor> plain = gradients(false, plain_products);
    const std::vector<torch::Tensor> rerun = gradients(true, rerun_products);
    assert_int_equal(plain_products, 1);  // the middle, made again
    assert_int_equal(rerun_products, 2);  // the rerun's forward only
    for (std::size_t i = 0; i < plain.size(); ++i) {
      if (!torch::equal(plain[i], rerun[i])) {
        fail_msg("affine %d: input %zu's gradient differs by %g", affine, i,
                 relative_error(plain[i], rerun[i]));
      }
    }
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradients_match_finite_differences_in_double),
      cmocka_unit_test(matches_the_unfused_operators),
      cmocka_unit_test(keeps_the_first_input_and_not_the_middle),
      cmocka_unit_test(a_rerun_keeps_the_middle_for_its_backward),
      cmocka_unit_test(bad_shapes_are_named),
      cmocka_unit_test(affine_form_gradients_match_finite_differences_in_double),
      cmocka_unit_test(affine_form_matches_the_unfused_operators),
      cmocka_unit_test(affine_form_keeps_neither_the_rows_nor_the_middle),
      cmocka_unit_test(affine_form_bad_shapes_are_named),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
