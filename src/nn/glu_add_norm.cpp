#include "nn/glu_add_norm.h"

#include <cstdint>
#include <vector>

#include <ATen/ops/glu.h>
#include <ATen/ops/glu_backward.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include "nn/glu_add_norm_cpu.h"
#include "nn/precision.h"

namespace tft {

namespace {

using glu_add_norm_cpu::Shape;

// The groups, rows and width of a call, checked, and the output's shape.
struct Layout {
  Shape shape;
  std::vector<std::int64_t> out_sizes;
};

// affine_groups: how many leading groups' skip is affine (the skip tensor holds the others).
Layout layout_of(const at::Tensor& x, const at::Tensor& skip, std::int64_t affine_groups,
                 const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& selection) {
  TORCH_CHECK(weight.dim() == 1 || weight.dim() == 2,
              "glu_add_norm: weight must be [H] or [G, H], got ", weight.sizes());
  TORCH_CHECK(bias.sizes() == weight.sizes(), "glu_add_norm: bias ", bias.sizes(),
              " does not match weight ", weight.sizes());
  const std::int64_t h = weight.size(-1);
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == 2 * h, "glu_add_norm: x must end in 2H = ", 2 * h,
              ", got ", x.sizes());
  std::vector<std::int64_t> skip_sizes = x.sizes().vec();
  skip_sizes.back() = h;
  if (affine_groups > 0) skip_sizes.front() -= affine_groups;
  TORCH_CHECK(skip.sizes() == c10::IntArrayRef(skip_sizes), "glu_add_norm: skip must be ",
              c10::IntArrayRef(skip_sizes), ", got ", skip.sizes());
  Layout l;
  l.shape.width = h;
  l.shape.affine_groups = affine_groups;
  if (weight.dim() == 2) {
    TORCH_CHECK(x.dim() == 3 && x.size(0) == weight.size(0), "glu_add_norm: with weight ",
                weight.sizes(), ", x must be [G, R, 2H], got ", x.sizes());
    l.shape.groups = weight.size(0);
    l.shape.rows = x.size(1);
    l.shape.weighted = selection.defined();
    l.out_sizes = {l.shape.groups, l.shape.rows, h};
    if (l.shape.weighted) {
      TORCH_CHECK(selection.dim() == 2 && selection.size(0) == l.shape.rows &&
                      selection.size(1) == l.shape.groups,
                  "glu_add_norm: selection must be [R, G] = [", l.shape.rows, ", ", l.shape.groups,
                  "], got ", selection.sizes());
      l.out_sizes = {l.shape.rows, h};
    }
  } else {
    TORCH_CHECK(!selection.defined(),
                "glu_add_norm: a selection needs a weight per group ([G, H])");
    l.shape.rows = h == 0 ? 0 : x.numel() / (2 * h);
    l.out_sizes = skip_sizes;
  }
  return l;
}

// t in `dtype`, without an operator call when it already is.
at::Tensor as_dtype(const at::Tensor& t, at::ScalarType dtype) {
  return t.scalar_type() == dtype ? t : t.to(dtype);
}

// ATen's pieces, [G, R, *] views. Every group's skip rows, the affine ones made whole.
at::Tensor whole_skip(const at::Tensor& skip3, const AffineSkip& affine) {
  if (!affine.scalars.defined()) return skip3;
  const at::Tensor made =
      affine.scalars.unsqueeze(-1) * affine.weight.unsqueeze(1) + affine.bias.unsqueeze(1);
  return skip3.size(0) == 0 ? made : at::cat({made, reduced_to_float(skip3)}, 0);
}

// The sum the norm normalises, in float32 (or double).
at::Tensor glu_plus_skip(const at::Tensor& x3, const at::Tensor& skip3) {
  return reduced_to_float(at::glu(x3, -1)) + reduced_to_float(skip3);
}

// The affine skip's parts in the accumulation dtype, contiguous; undefined parts when there are
// no affine groups.
AffineSkip affine_in(const AffineSkip& a, at::ScalarType acc) {
  if (!a.scalars.defined() || a.scalars.size(0) == 0) return {};
  return {as_dtype(a.scalars, acc).contiguous(), as_dtype(a.weight, acc).contiguous(),
          as_dtype(a.bias, acc).contiguous()};
}

// Forward and backward of both functions below; selection undefined unless weighted, the affine
// skip's parts undefined unless given. (Two functions, because an autograd function's tensor
// inputs must all be defined.)
struct GluAddNormSteps {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in,
                            const at::Tensor& skip_in, const AffineSkip& affine_given,
                            const at::Tensor& weight, const at::Tensor& bias,
                            const at::Tensor& selection_in, double eps, bool kernels) {
    const AffineSkip affine = affine_in(affine_given, weight.scalar_type());
    const std::int64_t affine_groups = affine.scalars.defined() ? affine.scalars.size(0) : 0;
    const Layout l = layout_of(x_in, skip_in, affine_groups, weight, bias, selection_in);
    const Shape& s = l.shape;
    if (affine_groups > 0) {
      TORCH_CHECK(affine.scalars.sizes() == c10::IntArrayRef({affine_groups, s.rows}) &&
                      affine.weight.sizes() == c10::IntArrayRef({affine_groups, s.width}) &&
                      affine.bias.sizes() == affine.weight.sizes(),
                  "glu_add_norm: the affine skip must be scalars [Ga, R], weight and bias [Ga, H] "
                  "(R = ",
                  s.rows, ", H = ", s.width, "), got ", affine.scalars.sizes(), ", ",
                  affine.weight.sizes(), ", ", affine.bias.sizes());
    }
    const at::Tensor x = x_in.contiguous();
    const at::Tensor skip = skip_in.contiguous();
    const std::int64_t dense_groups = s.groups - affine_groups;
    // The selection in the accumulation dtype (float32 or double), as the kernels read it.
    const at::Tensor selection =
        s.weighted ? as_dtype(selection_in, weight.scalar_type()).contiguous() : at::Tensor();
    at::Tensor out, mean, rstd;
    if (kernels) {
      glu_add_norm_cpu::Forward f = glu_add_norm_cpu::forward(
          x.view({s.groups * s.rows, 2 * s.width}), skip.view({dense_groups * s.rows, s.width}),
          affine, weight.contiguous(), bias.contiguous(), selection, eps, s);
      out = f.out;
      mean = f.mean;
      rstd = f.rstd;
    } else {
      const at::Tensor y =
          glu_plus_skip(x.view({s.groups, s.rows, 2 * s.width}),
                        whole_skip(skip.view({dense_groups, s.rows, s.width}), affine));
      mean = y.mean(-1, /*keepdim=*/true);
      const at::Tensor centred = y - mean;
      rstd = (centred * centred).mean(-1, /*keepdim=*/true).add(eps).rsqrt();
      out =
          centred * rstd * weight.view({s.groups, 1, s.width}) + bias.view({s.groups, 1, s.width});
      if (s.weighted) out = (out * selection.t().unsqueeze(-1)).sum(0);
    }
    ctx->save_for_backward(
        {x, skip, weight, bias, selection, mean, rstd, affine.scalars, affine.weight, affine.bias});
    ctx->saved_data["groups"] = s.groups;
    ctx->saved_data["rows"] = s.rows;
    ctx->saved_data["width"] = s.width;
    ctx->saved_data["weighted"] = s.weighted;
    ctx->saved_data["affine_groups"] = affine_groups;
    ctx->saved_data["selection_dtype"] =
        s.weighted ? selection_in.scalar_type() : weight.scalar_type();
    ctx->saved_data["affine_dtype"] =
        affine_groups > 0 ? affine_given.scalars.scalar_type() : weight.scalar_type();
    ctx->saved_data["kernels"] = kernels;
    ctx->saved_data["x_sizes"] = x_in.sizes().vec();
    ctx->saved_data["skip_sizes"] = skip_in.sizes().vec();
    return out.view(l.out_sizes);
  }

  // The gradients of x, skip, weight, bias, selection (undefined unless weighted) and the affine
  // skip's scalars, weight and bias (undefined unless given).
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 const torch::autograd::variable_list& grads) {
    const std::vector<at::Tensor> saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &skip = saved[1], &weight = saved[2], &bias = saved[3],
                     &selection = saved[4], &mean = saved[5], &rstd = saved[6];
    const AffineSkip affine{saved[7], saved[8], saved[9]};
    Shape s;
    s.groups = ctx->saved_data["groups"].toInt();
    s.rows = ctx->saved_data["rows"].toInt();
    s.width = ctx->saved_data["width"].toInt();
    s.weighted = ctx->saved_data["weighted"].toBool();
    s.affine_groups = ctx->saved_data["affine_groups"].toInt();
    const std::int64_t dense_groups = s.groups - s.affine_groups;
    const std::vector<std::int64_t> x_sizes = ctx->saved_data["x_sizes"].toIntVector();
    const std::vector<std::int64_t> skip_sizes = ctx->saved_data["skip_sizes"].toIntVector();
    const at::Tensor grad = grads[0];
    if (!grad.defined()) return torch::autograd::variable_list(8);
    at::Tensor dx, dskip, dweight, dbias, dselection;
    AffineSkip daffine;
    if (ctx->saved_data["kernels"].toBool()) {
      const std::int64_t out_rows = s.weighted ? s.rows : s.groups * s.rows;
      glu_add_norm_cpu::Backward g = glu_add_norm_cpu::backward(
          grad.contiguous().view({out_rows, s.width}), x.view({s.groups * s.rows, 2 * s.width}),
          skip.view({dense_groups * s.rows, s.width}), affine, weight.contiguous(),
          bias.contiguous(), selection, mean, rstd, s);
      dx = g.x;
      dskip = g.skip;
      dweight = g.weight;
      dbias = g.bias;
      dselection = g.selection;
      daffine = g.affine;
    } else {
      const at::Tensor x3 = x.view({s.groups, s.rows, 2 * s.width});
      const at::Tensor w3 = weight.view({s.groups, 1, s.width});
      const at::Tensor xhat =
          (glu_plus_skip(x3, whole_skip(skip.view({dense_groups, s.rows, s.width}), affine)) -
           mean) *
          rstd;
      at::Tensor go;  // [G, R, H]
      if (s.weighted) {
        const at::Tensor g3 = grad.view({1, s.rows, s.width});
        dselection = (g3 * (xhat * w3 + bias.view({s.groups, 1, s.width}))).sum(-1).t();
        go = g3 * selection.t().unsqueeze(-1);
      } else {
        go = grad.view({s.groups, s.rows, s.width});
      }
      const at::Tensor dxhat = go * w3;
      const at::Tensor dy =
          rstd * (dxhat - dxhat.mean(-1, true) - xhat * (dxhat * xhat).mean(-1, true));
      dweight = (go * xhat).sum(1);
      dbias = go.sum(1);
      dskip = as_dtype(dy.narrow(0, s.affine_groups, dense_groups), skip.scalar_type());
      if (s.affine_groups > 0) {
        const at::Tensor d = dy.narrow(0, 0, s.affine_groups);  // [Ga, R, H]
        daffine = {(d * affine.weight.unsqueeze(1)).sum(-1),
                   (d * affine.scalars.unsqueeze(-1)).sum(1), d.sum(1)};
      }
      dx = at::glu_backward(as_dtype(dy, x.scalar_type()), x3, -1);
    }
    if (dselection.defined()) {
      dselection = as_dtype(dselection, ctx->saved_data["selection_dtype"].toScalarType());
    }
    const at::ScalarType affine_dtype = ctx->saved_data["affine_dtype"].toScalarType();
    const auto in_affine_dtype = [&](const at::Tensor& t) {
      return t.defined() ? as_dtype(t, affine_dtype) : t;
    };
    return {dx.view(x_sizes),
            dskip.reshape(skip_sizes),
            as_dtype(dweight.reshape(weight.sizes()), weight.scalar_type()),
            as_dtype(dbias.reshape(weight.sizes()), weight.scalar_type()),
            dselection,
            in_affine_dtype(daffine.scalars),
            in_affine_dtype(daffine.weight),
            in_affine_dtype(daffine.bias)};
  }
};

class GluAddNormFunction : public torch::autograd::Function<GluAddNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& skip, const at::Tensor& weight,
                            const at::Tensor& bias, double eps, bool kernels) {
    return GluAddNormSteps::forward(ctx, x, skip, {}, weight, bias, {}, eps, kernels);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list g = GluAddNormSteps::backward(ctx, grads);
    return {g[0], g[1], g[2], g[3], {}, {}};  // x, skip, weight, bias; nothing for eps, kernels
  }
};

// The weighted form, its affine skip given as three tensors with no groups ([0, R], [0, H])
// when there is none.
class WeightedGluAddNormFunction : public torch::autograd::Function<WeightedGluAddNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& skip, const at::Tensor& scalars,
                            const at::Tensor& skip_weight, const at::Tensor& skip_bias,
                            const at::Tensor& weight, const at::Tensor& bias,
                            const at::Tensor& selection, double eps, bool kernels) {
    return GluAddNormSteps::forward(ctx, x, skip, {scalars, skip_weight, skip_bias}, weight, bias,
                                    selection, eps, kernels);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::autograd::variable_list g = GluAddNormSteps::backward(ctx, grads);
    // In the inputs' order: x, skip, the affine skip's three, weight, bias, selection; nothing
    // for eps, kernels.
    return {g[0], g[1], g[5], g[6], g[7], g[2], g[3], g[4], {}, {}};
  }
};

}  // namespace

at::Tensor glu_add_norm(const at::Tensor& x, const at::Tensor& skip, const at::Tensor& weight,
                        const at::Tensor& bias, double eps, GluAddNormPath path) {
  const bool kernels = path == GluAddNormPath::kAuto && glu_add_norm_cpu::applies(x, skip, weight);
  return GluAddNormFunction::apply(x, skip, weight, bias, eps, kernels);
}

at::Tensor glu_add_norm_weighted(const at::Tensor& x, const at::Tensor& skip,
                                 const at::Tensor& weight, const at::Tensor& bias,
                                 const at::Tensor& selection, double eps, GluAddNormPath path) {
  return glu_add_norm_weighted(x, AffineSkip{}, skip, weight, bias, selection, eps, path);
}

at::Tensor glu_add_norm_weighted(const at::Tensor& x, const AffineSkip& affine,
                                 const at::Tensor& skip, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& selection, double eps,
                                 GluAddNormPath path) {
  TORCH_CHECK(selection.defined(), "glu_add_norm_weighted: selection is undefined");
  const bool kernels = path == GluAddNormPath::kAuto && glu_add_norm_cpu::applies(x, skip, weight);
  if (affine.scalars.defined()) {
    return WeightedGluAddNormFunction::apply(x, skip, affine.scalars, affine.weight, affine.bias,
                                             weight, bias, selection, eps, kernels);
  }
  const std::int64_t rows = selection.size(0), h = weight.size(-1);
  return WeightedGluAddNormFunction::apply(x, skip, weight.new_empty({0, rows}),
                                           weight.new_empty({0, h}), weight.new_empty({0, h}),
                                           weight, bias, selection, eps, kernels);
}

}  // namespace tft
