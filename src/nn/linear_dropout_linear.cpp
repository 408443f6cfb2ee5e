#include "nn/linear_dropout_linear.h"

#include "nn/dropout.h"

#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>

namespace tft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class LinearDropoutLinear : public torch::autograd::Function<LinearDropoutLinear> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w1,
                            const at::Tensor& b1, const at::Tensor& w2, const at::Tensor& b2,
                            double p) {
    // The products run as autocast makes them (itself, outside autocast); their dtype is kept,
    // so that backward, where autocast is off, makes the middle again from the same operands.
    // As Dropout: no seed drawn for an empty tensor (the generator moves alike either way).
    const at::Tensor middle = at::baddbmm(b1.unsqueeze(1), x, w1.transpose(1, 2));
    const bool draws = p > 0.0 && middle.numel() > 0;
    const std::uint64_t seed = draws ? draw_dropout_seed() : 0;
    if (draws) times_dropout_mask_(middle, p, seed);
    ctx->save_for_backward({x, w1, b1, w2});
    ctx->saved_data["p"] = draws ? p : 0.0;
    ctx->saved_data["seed"] = static_cast<std::int64_t>(seed);
    ctx->saved_data["compute"] = static_cast<std::int64_t>(middle.scalar_type());
    ctx->saved_data["b2_dtype"] = static_cast<std::int64_t>(b2.scalar_type());
    return at::baddbmm(b2.unsqueeze(1), middle, w2.transpose(1, 2));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return variable_list(6);  // nothing flows back through the output
    const at::Tensor &x = saved[0], &w1 = saved[1], &b1 = saved[2], &w2 = saved[3];
    const double p = ctx->saved_data["p"].toDouble();
    const auto seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());
    const auto compute = static_cast<at::ScalarType>(ctx->saved_data["compute"].toInt());
    const auto in_compute = [&](const at::Tensor& t) { return t.to(compute); };
    const at::Tensor grad = in_compute(grads[0]);
    at::Tensor xc = in_compute(x);

    // out = middle W2^T + b2, middle = dropout(first), first = x W1^T + b1. The middle and the
    // first layer's gradient take the mask in one pass (one draw of its numbers); the middle
    // lives only as long as W2's gradient needs it.
    at::Tensor middle =
        at::baddbmm(in_compute(b1).unsqueeze(1), xc, in_compute(w1).transpose(1, 2));
    at::Tensor grad_first = at::bmm(grad, in_compute(w2));  // [G, R, M]
    if (p > 0.0) times_dropout_mask_(middle, p, seed, grad_first);
    const at::Tensor grad_w2 = at::bmm(grad.transpose(1, 2), middle);  // [G, O, M]
    middle.reset();
    const at::Tensor grad_b2 = grad.sum(1);
    const at::Tensor grad_w1 = at::bmm(grad_first.transpose(1, 2), xc);  // [G, M, I]
    xc.reset();
    const at::Tensor grad_b1 = grad_first.sum(1);
    const at::Tensor grad_x = at::bmm(grad_first, in_compute(w1));  // [G, R, I]
    grad_first.reset();  // before x's gradient takes x's dtype (a copy under mixed precision)

    const auto as = [](const at::Tensor& g, const at::Tensor& input) {
      return g.to(input.scalar_type());
    };
    const auto b2_dtype = static_cast<at::ScalarType>(ctx->saved_data["b2_dtype"].toInt());
    return {as(grad_x, x),   as(grad_w1, w1),      as(grad_b1, b1),
            as(grad_w2, w2), grad_b2.to(b2_dtype), at::Tensor()};
  }
};

}  // namespace

at::Tensor linear_dropout_linear(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1,
                                 const at::Tensor& w2, const at::Tensor& b2, double dropout) {
  TORCH_CHECK(x.dim() == 3 && w1.dim() == 3 && w2.dim() == 3 && b1.dim() == 2 && b2.dim() == 2,
              "linear_dropout_linear: expected x [G, R, I], w1 [G, M, I], b1 [G, M], "
              "w2 [G, O, M], b2 [G, O]; got x ",
              x.sizes(), ", w1 ", w1.sizes(), ", b1 ", b1.sizes(), ", w2 ", w2.sizes(), ", b2 ",
              b2.sizes());
  const int64_t groups = x.size(0), in = x.size(2), mid = w1.size(1), out = w2.size(1);
  TORCH_CHECK(w1.size(0) == groups && w1.size(2) == in && b1.size(0) == groups &&
                  b1.size(1) == mid && w2.size(0) == groups && w2.size(2) == mid &&
                  b2.size(0) == groups && b2.size(1) == out,
              "linear_dropout_linear: shapes disagree: x ", x.sizes(), ", w1 ", w1.sizes(), ", b1 ",
              b1.sizes(), ", w2 ", w2.sizes(), ", b2 ", b2.sizes());
  TORCH_CHECK(dropout >= 0.0 && dropout < 1.0,
              "linear_dropout_linear: dropout must be in [0, 1), got ", dropout);
  if (!x.device().is_cpu()) {
    const at::Tensor middle =
        training_dropout(at::baddbmm(b1.unsqueeze(1), x, w1.transpose(1, 2)), dropout);
    return at::baddbmm(b2.unsqueeze(1), middle, w2.transpose(1, 2));
  }
  return LinearDropoutLinear::apply(x, w1, b1, w2, b2, dropout);
}

}  // namespace tft
