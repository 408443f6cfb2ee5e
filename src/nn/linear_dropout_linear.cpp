#include "nn/linear_dropout_linear.h"

#include "checkpoint/recompute.h"
#include "nn/dropout.h"

#include <ATen/ops/addcmul.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/elu.h>
#include <ATen/ops/elu_backward.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>

namespace tft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// out = dropout(x W1^T + b1) W2^T + b2, the products as autocast makes them (each function's
// forward runs under the caller's autocast state). Records in `ctx` what backward_products reads.
//
// In a checkpointed segment's rerun (checkpoint::is_recomputing()) the middle is kept as well:
// that forward's backward follows at once, so the middle lives for one chunk's backward only,
// and backward skips the product that would make it a third time (first forward, rerun,
// backward). Its bits are the ones backward would make, so gradients do not change.
at::Tensor forward_products(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w1,
                            const at::Tensor& b1, const at::Tensor& w2, const at::Tensor& b2,
                            double p) {
  // As Dropout: no seed drawn for an empty tensor (the generator moves alike either way).
  const at::Tensor middle = at::baddbmm(b1.unsqueeze(1), x, w1.transpose(1, 2));
  const bool draws = p > 0.0 && middle.numel() > 0;
  const std::uint64_t seed = draws ? draw_dropout_seed() : 0;
  if (draws) times_dropout_mask_(middle, p, seed);
  ctx->saved_data["p"] = draws ? p : 0.0;
  ctx->saved_data["seed"] = static_cast<std::int64_t>(seed);
  ctx->saved_data["compute"] = static_cast<std::int64_t>(middle.scalar_type());
  ctx->saved_data["b2_dtype"] = static_cast<std::int64_t>(b2.scalar_type());
  if (checkpoint::is_recomputing()) ctx->saved_data["middle"] = middle;
  return at::baddbmm(b2.unsqueeze(1), middle, w2.transpose(1, 2));
}

// The products' dtype that forward_products recorded: backward runs without autocast, so it
// casts to it itself and makes the middle again from the forward's operands, bit for bit.
at::ScalarType compute_dtype(AutogradContext* ctx) {
  return static_cast<at::ScalarType>(ctx->saved_data["compute"].toInt());
}

struct ProductGradients {
  at::Tensor x, w1, b1, w2, b2;  // x's in the compute dtype, b2's in b2's own
};

// forward_products' gradients from its output's gradient `grad` and its first input `xc`, made
// again in the compute dtype by the caller (released here as soon as W1's gradient has it).
ProductGradients backward_products(AutogradContext* ctx, const at::Tensor& grad_out, at::Tensor xc,
                                   const at::Tensor& w1, const at::Tensor& b1,
                                   const at::Tensor& w2) {
  const double p = ctx->saved_data["p"].toDouble();
  const auto seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());
  const at::ScalarType compute = compute_dtype(ctx);
  const auto in_compute = [&](const at::Tensor& t) { return t.to(compute); };
  const at::Tensor grad = in_compute(grad_out);

  // out = middle W2^T + b2, middle = dropout(first), first = x W1^T + b1. The middle and the
  // first layer's gradient take the mask in one pass (one draw of its numbers); the middle
  // lives only as long as W2's gradient needs it.
  at::Tensor grad_first = at::bmm(grad, in_compute(w2));  // [G, R, M]
  at::Tensor middle;
  if (const auto kept = ctx->saved_data.find("middle"); kept != ctx->saved_data.end()) {
    middle = kept->second.toTensor();  // a rerun's, already through the mask
    kept->second = at::Tensor();       // released with the local below, after W2's gradient
    if (p > 0.0) times_dropout_mask_(grad_first, p, seed);
  } else {
    middle = at::baddbmm(in_compute(b1).unsqueeze(1), xc, in_compute(w1).transpose(1, 2));
    if (p > 0.0) times_dropout_mask_(middle, p, seed, grad_first);
  }
  ProductGradients g;
  g.w2 = at::bmm(grad.transpose(1, 2), middle);  // [G, O, M]
  middle.reset();
  g.b2 = grad.sum(1).to(static_cast<at::ScalarType>(ctx->saved_data["b2_dtype"].toInt()));
  g.w1 = at::bmm(grad_first.transpose(1, 2), xc);  // [G, M, I]
  xc.reset();
  g.b1 = grad_first.sum(1);
  g.x = at::bmm(grad_first, in_compute(w1));  // [G, R, I]
  return g;
}

// `g` in `input`'s dtype (a copy under mixed precision).
at::Tensor as(const at::Tensor& g, const at::Tensor& input) {
  return g.defined() ? g.to(input.scalar_type()) : g;
}

class LinearDropoutLinear : public torch::autograd::Function<LinearDropoutLinear> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w1,
                            const at::Tensor& b1, const at::Tensor& w2, const at::Tensor& b2,
                            double p) {
    ctx->save_for_backward({x, w1, b1, w2});
    return forward_products(ctx, x, w1, b1, w2, b2, p);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return variable_list(6);  // nothing flows back through the output
    const at::Tensor &x = saved[0], &w1 = saved[1], &b1 = saved[2], &w2 = saved[3];
    ProductGradients g = backward_products(ctx, grads[0], x.to(compute_dtype(ctx)), w1, b1, w2);
    const at::Tensor grad_x = as(g.x, x);
    g.x.reset();  // before the next copies: one [G, R, I] tensor at a time
    return {grad_x, as(g.w1, w1), as(g.b1, b1), as(g.w2, w2), g.b2, at::Tensor()};
  }
};

// ELU(scalars * weight + bias) per group, [Ga, R, I] in `dtype`: the same operators in forward
// and in backward's remake, so the two agree bit for bit. The sum is made as the variable
// selection made it before this function kept it (addcmul in the promoted dtype, then the cast).
at::Tensor affine_elu(const at::Tensor& scalars, const at::Tensor& weight, const at::Tensor& bias,
                      at::ScalarType dtype) {
  at::Tensor rows = at::addcmul(bias.unsqueeze(1), scalars.unsqueeze(-1), weight.unsqueeze(1));
  if (rows.scalar_type() != dtype) rows = rows.to(dtype);
  return at::elu_(rows);
}

// x for the products: the affine groups' rows, then the dense groups'.
at::Tensor first_input(const at::Tensor& affine_x, const at::Tensor& elu_dense) {
  if (!elu_dense.defined() || elu_dense.size(0) == 0) return affine_x;
  return at::cat({affine_x, elu_dense.to(affine_x.scalar_type())}, 0);
}

class AffineEluLinearDropoutLinear
    : public torch::autograd::Function<AffineEluLinearDropoutLinear> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& scalars,
                            const at::Tensor& weight, const at::Tensor& bias,
                            const at::Tensor& elu_dense, const at::Tensor& w1, const at::Tensor& b1,
                            const at::Tensor& w2, const at::Tensor& b2, double p,
                            at::ScalarType dtype) {
    ctx->save_for_backward({scalars, weight, bias, elu_dense, w1, b1, w2});
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(dtype);
    const at::Tensor x = first_input(affine_elu(scalars, weight, bias, dtype), elu_dense);
    return forward_products(ctx, x, w1, b1, w2, b2, p);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return variable_list(10);
    const at::Tensor &scalars = saved[0], &weight = saved[1], &bias = saved[2], &w1 = saved[4],
                     &b1 = saved[5], &w2 = saved[6];
    const at::Tensor& elu_dense = saved[3];  // [0, R, I] when every group is affine
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const std::int64_t affine_groups = scalars.size(0);

    const at::Tensor affine_x = affine_elu(scalars, weight, bias, dtype);
    ProductGradients g = backward_products(
        ctx, grads[0], first_input(affine_x, elu_dense).to(compute_dtype(ctx)), w1, b1, w2);
    at::Tensor grad_dense;
    if (elu_dense.size(0) > 0) {
      grad_dense = as(g.x.narrow(0, affine_groups, elu_dense.size(0)), elu_dense);
    }
    // Through the ELU (from its output, as autograd's ELU does) and the cast, to the rows' sum
    // in its own dtype; then the sum's three inputs, as autograd differentiates addcmul.
    const at::Tensor grad_rows =
        at::elu_backward(g.x.narrow(0, 0, affine_groups).to(affine_x.scalar_type()), 1.0, 1.0, 1.0,
                         /*is_result=*/true, affine_x)
            .to(c10::promoteTypes(bias.scalar_type(),
                                  c10::promoteTypes(scalars.scalar_type(), weight.scalar_type())));
    g.x.reset();
    const at::Tensor grad_bias = grad_rows.sum(1);
    const at::Tensor grad_weight = (grad_rows * scalars.unsqueeze(-1)).sum(1);
    at::Tensor grad_scalars;
    if (ctx->needs_input_grad(0)) grad_scalars = (grad_rows * weight.unsqueeze(1)).sum(-1);
    return {as(grad_scalars, scalars),
            as(grad_weight, weight),
            as(grad_bias, bias),
            grad_dense,
            as(g.w1, w1),
            as(g.b1, b1),
            as(g.w2, w2),
            g.b2,
            at::Tensor(),
            at::Tensor()};
  }
};

// x: the first input's shape.
void check_product_shapes(c10::IntArrayRef x, const at::Tensor& w1, const at::Tensor& b1,
                          const at::Tensor& w2, const at::Tensor& b2, double dropout) {
  TORCH_CHECK(x.size() == 3 && w1.dim() == 3 && w2.dim() == 3 && b1.dim() == 2 && b2.dim() == 2,
              "linear_dropout_linear: expected x [G, R, I], w1 [G, M, I], b1 [G, M], "
              "w2 [G, O, M], b2 [G, O]; got x ",
              x, ", w1 ", w1.sizes(), ", b1 ", b1.sizes(), ", w2 ", w2.sizes(), ", b2 ",
              b2.sizes());
  const int64_t groups = x[0], in = x[2], mid = w1.size(1), out = w2.size(1);
  TORCH_CHECK(w1.size(0) == groups && w1.size(2) == in && b1.size(0) == groups &&
                  b1.size(1) == mid && w2.size(0) == groups && w2.size(2) == mid &&
                  b2.size(0) == groups && b2.size(1) == out,
              "linear_dropout_linear: shapes disagree: x ", x, ", w1 ", w1.sizes(), ", b1 ",
              b1.sizes(), ", w2 ", w2.sizes(), ", b2 ", b2.sizes());
  TORCH_CHECK(dropout >= 0.0 && dropout < 1.0,
              "linear_dropout_linear: dropout must be in [0, 1), got ", dropout);
}

// The unfused operators, off the CPU.
at::Tensor unfused(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1,
                   const at::Tensor& w2, const at::Tensor& b2, double dropout) {
  const at::Tensor middle =
      training_dropout(at::baddbmm(b1.unsqueeze(1), x, w1.transpose(1, 2)), dropout);
  return at::baddbmm(b2.unsqueeze(1), middle, w2.transpose(1, 2));
}

}  // namespace

at::Tensor linear_dropout_linear(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1,
                                 const at::Tensor& w2, const at::Tensor& b2, double dropout) {
  check_product_shapes(x.sizes(), w1, b1, w2, b2, dropout);
  if (!x.device().is_cpu()) return unfused(x, w1, b1, w2, b2, dropout);
  return LinearDropoutLinear::apply(x, w1, b1, w2, b2, dropout);
}

at::Tensor linear_dropout_linear(const AffineRows& affine, const at::Tensor& elu_dense,
                                 const at::Tensor& w1, const at::Tensor& b1, const at::Tensor& w2,
                                 const at::Tensor& b2, double dropout, at::ScalarType dtype) {
  TORCH_CHECK(affine.scalars.dim() == 2 && affine.weight.dim() == 2 && affine.bias.dim() == 2 &&
                  affine.scalars.size(0) >= 1 && affine.weight.sizes() == affine.bias.sizes() &&
                  affine.weight.size(0) == affine.scalars.size(0),
              "linear_dropout_linear: expected affine rows scalars [Ga, R], weight and bias "
              "[Ga, I] with Ga >= 1; got scalars ",
              affine.scalars.sizes(), ", weight ", affine.weight.sizes(), ", bias ",
              affine.bias.sizes());
  const int64_t affine_groups = affine.scalars.size(0), rows = affine.scalars.size(1),
                in = affine.weight.size(1);
  const bool dense = elu_dense.defined() && elu_dense.size(0) > 0;
  TORCH_CHECK(
      !dense || (elu_dense.dim() == 3 && elu_dense.size(1) == rows && elu_dense.size(2) == in),
      "linear_dropout_linear: the dense groups' x must be [G - Ga, ", rows, ", ", in, "], got ",
      elu_dense.sizes());
  const int64_t groups = affine_groups + (dense ? elu_dense.size(0) : 0);
  check_product_shapes({groups, rows, in}, w1, b1, w2, b2, dropout);
  if (!affine.scalars.device().is_cpu()) {
    const at::Tensor x = first_input(affine_elu(affine.scalars, affine.weight, affine.bias, dtype),
                                     dense ? elu_dense : at::Tensor());
    return unfused(x, w1, b1, w2, b2, dropout);
  }
  // No dense groups: [0, R, I] rather than an undefined tensor, which a function cannot take.
  return AffineEluLinearDropoutLinear::apply(
      affine.scalars, affine.weight, affine.bias,
      dense ? elu_dense : affine.weight.new_empty({0, rows, in}, at::TensorOptions(dtype)), w1, b1,
      w2, b2, dropout, dtype);
}

}  // namespace tft
