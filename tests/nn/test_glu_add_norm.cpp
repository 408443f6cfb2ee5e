// glu_add_norm (model/glu_add_norm.h), LayerNorm(skip + GLU(x)) in one autograd function: its
// gradients against finite differences in double precision, on the CPU kernels and on the ATen
// path; both paths against the unfused operators in float32 and bfloat16 within the documented
// bounds; the same bits for any thread count; the grouped layouts and the weighted sum over
// groups (glu_add_norm_weighted); bad shapes.
#include "nn/glu_add_norm.h"

#include "nn/cpu_isa.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/types.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header
#include "support/finite_differences.h"

using tft::GluAddNormPath;

namespace {

struct Inputs {
  torch::Tensor x, skip, weight, bias, selection;  // selection [R, G]: grouped inputs only
};

// plain: weight [H], x [2, R, 2H]; grouped: weight [G, H], output [G, R, H]; weighted: groups,
// output [R, H] summed with the selection weights.
enum class Mode { kPlain, kGrouped, kWeighted };

// x [G, R, 2H], skip [G, R, H], weight and bias [G, H] (or [..., 2H], [..., H], [H] with
// groups 0), requiring grad.
Inputs make_inputs(std::int64_t groups, std::int64_t rows, std::int64_t h, torch::Dtype dtype,
                   std::uint64_t seed) {
  torch::manual_seed(seed);
  const auto opts = torch::TensorOptions().dtype(torch::kDouble);
  std::vector<std::int64_t> lead =
      groups > 0 ? std::vector<std::int64_t>{groups, rows} : std::vector<std::int64_t>{2, rows};
  std::vector<std::int64_t> xs = lead, ss = lead;
  xs.push_back(2 * h);
  ss.push_back(h);
  const std::vector<std::int64_t> ws =
      groups > 0 ? std::vector<std::int64_t>{groups, h} : std::vector<std::int64_t>{h};
  const torch::Dtype wdtype = dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
  Inputs in{(torch::randn(xs, opts) * 2).to(dtype).requires_grad_(),
            torch::randn(ss, opts).to(dtype).requires_grad_(),
            (1 + 0.3 * torch::randn(ws, opts)).to(wdtype).requires_grad_(),
            (0.3 * torch::randn(ws, opts)).to(wdtype).requires_grad_(),
            {}};
  if (groups > 0) {
    in.selection =
        torch::softmax(torch::randn({rows, groups}, opts), -1).to(wdtype).requires_grad_();
  }
  return in;
}

// The unfused operators: LayerNorm (per group) of the float32 sum of GLU(x) and skip.
torch::Tensor unfused(const Inputs& in, double eps, Mode mode) {
  const torch::Tensor y =
      at::glu(in.x, -1).to(in.weight.scalar_type()) + in.skip.to(in.weight.scalar_type());
  const std::int64_t h = in.weight.size(-1);
  torch::Tensor out;
  if (in.weight.dim() == 1) {
    out = torch::layer_norm(y, {h}, in.weight, in.bias, eps);
  } else {
    out = torch::layer_norm(y, {h}, {}, {}, eps) * in.weight.unsqueeze(1) + in.bias.unsqueeze(1);
  }
  if (mode == Mode::kWeighted) return (out * in.selection.t().unsqueeze(-1)).sum(0);
  return out;
}

torch::Tensor fused(const Inputs& in, double eps, Mode mode, GluAddNormPath path) {
  if (mode == Mode::kWeighted) {
    return tft::glu_add_norm_weighted(in.x, in.skip, in.weight, in.bias, in.selection, eps, path);
  }
  return tft::glu_add_norm(in.x, in.skip, in.weight, in.bias, eps, path);
}

std::vector<torch::Tensor> inputs_of(const Inputs& in, Mode mode) {
  std::vector<torch::Tensor> v{in.x, in.skip, in.weight, in.bias};
  if (mode == Mode::kWeighted) v.push_back(in.selection);
  return v;
}

// A fixed projection of the output, so one backward gives every input's gradient.
torch::Tensor loss_of(const torch::Tensor& out) {
  const torch::Tensor w =
      torch::linspace(-1, 1, out.numel(), out.options().requires_grad(false)).view(out.sizes());
  return (out * w).sum() + (out * out).sum() * 0.1;
}

std::vector<torch::Tensor> grads_of(const Inputs& in, Mode mode, const torch::Tensor& out) {
  return torch::autograd::grad({loss_of(out)}, inputs_of(in, mode));
}

double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const double scale = b.to(torch::kDouble).abs().max().item<double>();
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>() /
         (scale > 0 ? scale : 1.0);
}

// Central differences of the loss against every element of every input, in double.
void check_against_finite_differences(GluAddNormPath path, Mode mode) {
  const Inputs in = make_inputs(mode == Mode::kPlain ? 0 : 3, 5, 4, torch::kDouble, 11);
  tft::testing::check_gradients_by_central_differences(
      [&] { return loss_of(fused(in, 1e-5, mode, path)); }, inputs_of(in, mode),
      "path " + std::to_string(static_cast<int>(path)) + ", mode " +
          std::to_string(static_cast<int>(mode)));
}

}  // namespace

TFT_TEST(gradients_match_finite_differences_in_double) {
  for (const GluAddNormPath path : {GluAddNormPath::kAuto, GluAddNormPath::kAten}) {
    for (const Mode mode : {Mode::kPlain, Mode::kGrouped, Mode::kWeighted}) {
      check_against_finite_differences(path, mode);
    }
  }
}

// Both paths against the unfused operators: float32 within 1e-5 and bfloat16 inputs within 2e-2
// of the largest value (the bounds docs/config.md gives for whole-model gradients).
TFT_TEST(both_paths_match_the_unfused_operators) {
  for (const torch::Dtype dtype : {torch::kFloat, torch::kBFloat16}) {
    const double bound = dtype == torch::kFloat ? 1e-5 : 2e-2;
    for (const Mode mode : {Mode::kPlain, Mode::kGrouped, Mode::kWeighted}) {
      const Inputs in = make_inputs(mode == Mode::kPlain ? 0 : 4, 70, 24, dtype, 3);  // 2 blocks
      const torch::Tensor ref_out = unfused(in, 1e-5, mode);
      const std::vector<torch::Tensor> ref = grads_of(in, mode, ref_out);
      for (const GluAddNormPath path : {GluAddNormPath::kAuto, GluAddNormPath::kAten}) {
        const torch::Tensor out = fused(in, 1e-5, mode, path);
        assert_true(out.scalar_type() == torch::kFloat);
        assert_true(out.sizes() == ref_out.sizes());
        const double err = relative_error(out, ref_out);
        if (err > bound) fail_msg("output: %g > %g", err, bound);
        const std::vector<torch::Tensor> got = grads_of(in, mode, out);
        for (std::size_t k = 0; k < got.size(); ++k) {
          assert_true(got[k].scalar_type() == ref[k].scalar_type());
          const double e = relative_error(got[k], ref[k]);
          if (e > bound)
            fail_msg("gradient %zu (dtype %s): %g > %g", k,
                     std::string(c10::toString(dtype)).c_str(), e, bound);
        }
      }
    }
  }
}

// The weight's gradient is summed over fixed blocks of rows: 1 and 2 threads give the same bits.
TFT_TEST(kernels_give_the_same_bits_for_any_thread_count) {
  const int threads = at::get_num_threads();
  std::vector<std::vector<torch::Tensor>> runs;
  for (const int n : {1, 2}) {
    at::set_num_threads(n);
    const Inputs in = make_inputs(3, 300, 16, torch::kFloat, 5);
    for (const Mode mode : {Mode::kGrouped, Mode::kWeighted}) {
      runs.push_back(grads_of(in, mode, fused(in, 1e-5, mode, GluAddNormPath::kAuto)));
    }
  }
  at::set_num_threads(threads);
  for (std::size_t m = 0; m < 2; ++m) {
    for (std::size_t k = 0; k < runs[m].size(); ++k) assert_true(runs[m][k].equal(runs[m + 2][k]));
  }
}

// The kernels' instruction sets (nn/cpu_isa.h): the baseline and AVX2 give the same bits, in
// every mode, float32 and bfloat16 inputs, affine skip rows included, with a width (37) that
// leaves a tail after the vector lanes. Where the CPU has no AVX2 both runs take the baseline.
TFT_TEST(every_instruction_set_gives_the_same_bits) {
  for (const torch::Dtype dtype : {torch::kFloat, torch::kBFloat16}) {
    const Inputs in = make_inputs(3, 70, 37, dtype, 11);
    for (const Mode mode : {Mode::kPlain, Mode::kGrouped, Mode::kWeighted}) {
      // The output and every input's gradient.
      auto outputs = [&] {
        const torch::Tensor out = fused(in, 1e-5, mode, GluAddNormPath::kAuto);
        std::vector<torch::Tensor> all = grads_of(in, mode, out);
        all.push_back(out.detach());
        return all;
      };
      const std::vector<torch::Tensor> widest = outputs();
      std::vector<torch::Tensor> baseline;
      {
        const tft::ScopedCpuIsa isa(tft::CpuIsa::kBaseline);
        baseline = outputs();
      }
      assert_int_equal(widest.size(), baseline.size());
      for (std::size_t k = 0; k < widest.size(); ++k) assert_true(widest[k].equal(baseline[k]));
    }
    const Inputs g = make_inputs(3, 70, 37, dtype, 12);
    const tft::AffineSkip affine{torch::randn({2, 70}), torch::randn({2, 37}),
                                 torch::randn({2, 37})};
    auto run = [&] {
      return tft::glu_add_norm_weighted(g.x, affine, g.skip.narrow(0, 2, 1), g.weight, g.bias,
                                        g.selection, 1e-5);
    };
    const torch::Tensor widest = run();
    const tft::ScopedCpuIsa isa(tft::CpuIsa::kBaseline);
    assert_true(widest.equal(run()));
  }
  std::printf("# kernels compared: %s against baseline\n", tft::to_string(tft::cpu_isa()));
}

// Affine skip rows (glu_add_norm_weighted with an AffineSkip): the first Ga groups' skip made from
// one number a row. Against the same function given those rows made whole by ATen operators
// (whose gradients, through the made rows, autograd gives exactly, and the function's own are
// checked against finite differences above), with Ga of G = 3 being 2 (a skip tensor for the
// third) and 3 (none); double to 1e-12, float32 to 1e-5.
TFT_TEST(affine_skip_rows_match_the_rows_made_whole) {
  for (const std::int64_t affine_groups : {2, 3}) {
    for (const GluAddNormPath path : {GluAddNormPath::kAuto, GluAddNormPath::kAten}) {
      for (const torch::Dtype dtype : {torch::kDouble, torch::kFloat}) {
        const Inputs in = make_inputs(3, 70, 6, dtype, 9);
        const auto opts = torch::TensorOptions().dtype(dtype);
        const torch::Tensor scalars = torch::randn({affine_groups, 70}, opts).requires_grad_();
        const torch::Tensor sw = torch::randn({affine_groups, 6}, opts).requires_grad_();
        const torch::Tensor sb = torch::randn({affine_groups, 6}, opts).requires_grad_();
        const torch::Tensor dense = in.skip.narrow(0, affine_groups, 3 - affine_groups);
        const auto affine_out = [&] {
          return tft::glu_add_norm_weighted(in.x, tft::AffineSkip{scalars, sw, sb}, dense,
                                            in.weight, in.bias, in.selection, 1e-5, path);
        };
        const torch::Tensor made =
            torch::cat({scalars.unsqueeze(-1) * sw.unsqueeze(1) + sb.unsqueeze(1), dense}, 0);
        const torch::Tensor whole =
            tft::glu_add_norm_weighted(in.x, made, in.weight, in.bias, in.selection, 1e-5, path);
        const std::vector<torch::Tensor> wrt{in.x, scalars, sw, sb, in.weight, in.selection};
        const auto got = torch::autograd::grad({loss_of(affine_out())}, wrt);
        const auto want = torch::autograd::grad({loss_of(whole)}, wrt);
        const double bound = dtype == torch::kDouble ? 1e-12 : 1e-5;
        assert_true(relative_error(affine_out(), whole) <= bound);
        for (std::size_t k = 0; k < got.size(); ++k) {
          const double e = relative_error(got[k], want[k]);
          if (e > bound)
            fail_msg("Ga %lld, gradient %zu: %g > %g", static_cast<long long>(affine_groups), k, e,
                     bound);
        }
      }
    }
  }
}

TFT_TEST(bad_shapes_are_named) {
  const Inputs in = make_inputs(0, 3, 4, torch::kFloat, 1);
  TFT_ASSERT_THROWS_WITH(
      tft::glu_add_norm(in.x.narrow(-1, 0, 6), in.skip, in.weight, in.bias, 1e-5), c10::Error,
      "x must end in 2H = 8");
  TFT_ASSERT_THROWS_WITH(
      tft::glu_add_norm(in.x, in.skip.narrow(-1, 0, 3), in.weight, in.bias, 1e-5), c10::Error,
      "skip must be");
  TFT_ASSERT_THROWS_WITH(
      tft::glu_add_norm_weighted(in.x, in.skip, in.weight, in.bias, torch::ones({2, 1}), 1e-5),
      c10::Error, "a selection needs a weight per group");
  const Inputs g = make_inputs(3, 2, 4, torch::kFloat, 1);
  TFT_ASSERT_THROWS_WITH(
      tft::glu_add_norm(g.x.narrow(0, 0, 2), g.skip.narrow(0, 0, 2), g.weight, g.bias, 1e-5),
      c10::Error, "x must be [G, R, 2H]");
  TFT_ASSERT_THROWS_WITH(
      tft::glu_add_norm_weighted(g.x, g.skip, g.weight, g.bias, g.selection.t(), 1e-5), c10::Error,
      "selection must be [R, G] = [2, 3]");
}

// No row at all: an empty output, and empty gradients.
TFT_TEST(empty_inputs_give_empty_outputs) {
  const Inputs in = make_inputs(2, 0, 4, torch::kFloat, 1);
  for (const Mode mode : {Mode::kGrouped, Mode::kWeighted}) {
    const torch::Tensor out = fused(in, 1e-5, mode, GluAddNormPath::kAuto);
    assert_int_equal(out.numel(), 0);
    const std::vector<torch::Tensor> g = grads_of(in, mode, out);
    assert_int_equal(g[0].numel(), 0);
    assert_true(g[2].abs().sum().item<double>() == 0.0);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradients_match_finite_differences_in_double),
      cmocka_unit_test(both_paths_match_the_unfused_operators),
      cmocka_unit_test(kernels_give_the_same_bits_for_any_thread_count),
      cmocka_unit_test(every_instruction_set_gives_the_same_bits),
      cmocka_unit_test(affine_skip_rows_match_the_rows_made_whole),
      cmocka_unit_test(bad_shapes_are_named),
      cmocka_unit_test(empty_inputs_give_empty_outputs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
