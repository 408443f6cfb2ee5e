#include "model/glu_add_norm_cpu.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

namespace tft::glu_add_norm_cpu {

namespace {

// Rows per parallel task, and per partial sum of the weight's gradient: fixed, so the sums (and so
// the gradients) are the same for any number of threads.
constexpr std::int64_t kRowsPerBlock = 64;

bool is_float_or_reduced(at::ScalarType t) {
  return t == at::kFloat || t == at::kBFloat16 || t == at::kHalf;
}

// Calls f with a value of the C++ type of `t` (float32, bfloat16 or half).
template <typename F>
void with_float_type(at::ScalarType t, F&& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kBFloat16: f(c10::BFloat16{}); break;
    case at::kHalf: f(c10::Half{}); break;
    default: TORCH_CHECK(false, "glu_add_norm: unsupported dtype ", t);
  }
}

template <typename Acc>
Acc sigmoid(Acc v) {
  return Acc(1) / (Acc(1) + std::exp(-v));
}

// One row's sum y = a * sigmoid(b) + skip into `y` (the GLU's value half a, gate half b), its
// sigmoids into `gate`; returns the sum of y.
template <typename XT, typename ST, typename Acc>
Acc glu_plus_skip(const XT* x, const ST* skip, std::int64_t h, Acc* y, Acc* gate) {
  Acc sum = 0;
  for (std::int64_t j = 0; j < h; ++j) {
    const Acc s = sigmoid(static_cast<Acc>(x[h + j]));
    gate[j] = s;
    y[j] = static_cast<Acc>(x[j]) * s + static_cast<Acc>(skip[j]);
    sum += y[j];
  }
  return sum;
}

template <typename Acc>
Acc reciprocal_std(const Acc* y, Acc mean, std::int64_t h, double eps) {
  Acc var = 0;
  for (std::int64_t j = 0; j < h; ++j) var += (y[j] - mean) * (y[j] - mean);
  return Acc(1) / std::sqrt(var / static_cast<Acc>(h) + static_cast<Acc>(eps));
}

// Parallel over rows r, each r's groups in order, so a weighted output row is summed over the
// groups in one fixed order.
template <typename XT, typename ST, typename Acc>
void forward_rows(const XT* x, const ST* skip, const Acc* w, const Acc* b, const Acc* selection,
                  double eps, const Shape& s, Acc* out, Acc* mean, Acc* rstd) {
  const std::int64_t h = s.width;
  const std::int64_t grain =
      std::max<std::int64_t>(1, kRowsPerBlock / std::max<std::int64_t>(1, s.groups));
  at::parallel_for(0, s.rows, grain, [&](std::int64_t begin, std::int64_t end) {
    std::vector<Acc> y(static_cast<std::size_t>(h)), gate(static_cast<std::size_t>(h));
    for (std::int64_t r = begin; r < end; ++r) {
      Acc* weighted = s.weighted ? out + r * h : nullptr;
      if (weighted) std::fill(weighted, weighted + h, Acc(0));
      for (std::int64_t g = 0; g < s.groups; ++g) {
        const std::int64_t i = g * s.rows + r;
        const Acc m = glu_plus_skip(x + i * 2 * h, skip + i * h, h, y.data(), gate.data()) /
                      static_cast<Acc>(h);
        const Acc rs = reciprocal_std(y.data(), m, h, eps);
        const Acc* wg = w + g * h;
        const Acc* bg = b + g * h;
        if (weighted) {
          const Acc share = selection[r * s.groups + g];
          for (std::int64_t j = 0; j < h; ++j)
            weighted[j] += share * ((y[j] - m) * rs * wg[j] + bg[j]);
        } else {
          Acc* o = out + i * h;
          for (std::int64_t j = 0; j < h; ++j) o[j] = (y[j] - m) * rs * wg[j] + bg[j];
        }
        mean[i] = m;
        rstd[i] = rs;
      }
    }
  });
}

// Each task is one block of rows within one group; its partial sums of the weight's and bias'
// gradients go to partial[task] ([tasks, 2, H]) and are added up in task order afterwards.
template <typename XT, typename ST, typename Acc>
void backward_rows(const Acc* grad_out, const XT* x, const ST* skip, const Acc* w, const Acc* b,
                   const Acc* selection, const Acc* mean, const Acc* rstd, const Shape& s, XT* dx,
                   ST* dskip, Acc* dselection, Acc* partial) {
  const std::int64_t h = s.width;
  const std::int64_t blocks = (s.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  at::parallel_for(0, s.groups * blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<Acc> y(static_cast<std::size_t>(h)), gate(static_cast<std::size_t>(h)),
        dxhat(static_cast<std::size_t>(h));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t g = task / blocks;
      const std::int64_t first = g * s.rows + (task % blocks) * kRowsPerBlock;
      const std::int64_t last = std::min(first + kRowsPerBlock, (g + 1) * s.rows);
      const Acc* wg = w + g * h;
      const Acc* bg = b + g * h;
      Acc* dw = partial + task * 2 * h;
      Acc* db = dw + h;
      std::fill(dw, dw + 2 * h, Acc(0));
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t r = i - g * s.rows;
        const XT* xi = x + i * 2 * h;
        glu_plus_skip(xi, skip + i * h, h, y.data(), gate.data());
        const Acc m = mean[i], rs = rstd[i];
        // The output row's gradient; weighted, this row's share of it.
        const Acc* go = grad_out + (s.weighted ? r : i) * h;
        const Acc share = s.weighted ? selection[r * s.groups + g] : Acc(1);
        Acc dshare = 0, c1 = 0, c2 = 0;
        for (std::int64_t j = 0; j < h; ++j) {
          const Acc xhat = (y[j] - m) * rs;
          y[j] = xhat;
          if (s.weighted) dshare += go[j] * (xhat * wg[j] + bg[j]);
          const Acc gj = share * go[j];
          dxhat[j] = gj * wg[j];
          c1 += dxhat[j];
          c2 += dxhat[j] * xhat;
          dw[j] += gj * xhat;
          db[j] += gj;
        }
        if (s.weighted) dselection[r * s.groups + g] = dshare;
        c1 /= static_cast<Acc>(h);
        c2 /= static_cast<Acc>(h);
        XT* dxi = dx + i * 2 * h;
        ST* dsi = dskip + i * h;
        for (std::int64_t j = 0; j < h; ++j) {
          const Acc dy = rs * (dxhat[j] - c1 - y[j] * c2);
          const Acc sg = gate[j];
          dsi[j] = static_cast<ST>(dy);
          dxi[j] = static_cast<XT>(dy * sg);
          dxi[h + j] = static_cast<XT>(dy * static_cast<Acc>(xi[j]) * sg * (Acc(1) - sg));
        }
      }
    }
  });
}

// out[g] = the sum over k of partial[g][k], k in order ([groups, blocks, n] -> [groups, n]).
template <typename Acc>
void add_blocks(const Acc* partial, std::int64_t groups, std::int64_t blocks, std::int64_t n,
                Acc* out) {
  for (std::int64_t g = 0; g < groups; ++g) {
    Acc* o = out + g * n;
    std::fill(o, o + n, Acc(0));
    for (std::int64_t k = 0; k < blocks; ++k) {
      const Acc* block = partial + (g * blocks + k) * n;
      for (std::int64_t j = 0; j < n; ++j) o[j] += block[j];
    }
  }
}

// Calls f(XT{}, ST{}, Acc{}) with the C++ types of x and skip and the accumulation type.
template <typename F>
void dispatch(const at::Tensor& x, const at::Tensor& skip, F&& f) {
  if (x.scalar_type() == at::kDouble) {
    f(double{}, double{}, double{});
    return;
  }
  with_float_type(x.scalar_type(), [&](auto xt) {
    with_float_type(skip.scalar_type(), [&](auto st) { f(xt, st, float{}); });
  });
}

}  // namespace

bool applies(const at::Tensor& x, const at::Tensor& skip, const at::Tensor& weight) {
  if (!x.device().is_cpu() || !skip.device().is_cpu() || !weight.device().is_cpu()) return false;
  if (x.scalar_type() == at::kDouble) {
    return skip.scalar_type() == at::kDouble && weight.scalar_type() == at::kDouble;
  }
  return is_float_or_reduced(x.scalar_type()) && is_float_or_reduced(skip.scalar_type()) &&
         weight.scalar_type() == at::kFloat;
}

Forward forward(const at::Tensor& x, const at::Tensor& skip, const at::Tensor& weight,
                const at::Tensor& bias, const at::Tensor& selection, double eps,
                const Shape& shape) {
  const at::ScalarType acc = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const std::int64_t n = shape.groups * shape.rows;
  const std::int64_t out_rows = shape.weighted ? shape.rows : n;
  Forward f{at::empty({out_rows, shape.width}, x.options().dtype(acc)),
            at::empty({n}, x.options().dtype(acc)), at::empty({n}, x.options().dtype(acc))};
  dispatch(x, skip, [&](auto xt, auto st, auto at_) {
    using XT = decltype(xt);
    using ST = decltype(st);
    using Acc = decltype(at_);
    forward_rows<XT, ST, Acc>(
        x.data_ptr<XT>(), skip.data_ptr<ST>(), weight.data_ptr<Acc>(), bias.data_ptr<Acc>(),
        shape.weighted ? selection.data_ptr<Acc>() : nullptr, eps, shape, f.out.data_ptr<Acc>(),
        f.mean.data_ptr<Acc>(), f.rstd.data_ptr<Acc>());
  });
  return f;
}

Backward backward(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& skip,
                  const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& selection,
                  const at::Tensor& mean, const at::Tensor& rstd, const Shape& shape) {
  const std::int64_t h = shape.width;
  const std::int64_t blocks = (shape.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  Backward g{at::empty_like(x), at::empty_like(skip), {}, {}, {}};
  if (shape.weighted) g.selection = at::empty_like(selection);
  const at::Tensor partial =
      at::empty({shape.groups, blocks, 2, h}, weight.options().dtype(mean.scalar_type()));
  dispatch(x, skip, [&](auto xt, auto st, auto at_) {
    using XT = decltype(xt);
    using ST = decltype(st);
    using Acc = decltype(at_);
    backward_rows<XT, ST, Acc>(
        grad_out.data_ptr<Acc>(), x.data_ptr<XT>(), skip.data_ptr<ST>(), weight.data_ptr<Acc>(),
        bias.data_ptr<Acc>(), shape.weighted ? selection.data_ptr<Acc>() : nullptr,
        mean.data_ptr<Acc>(), rstd.data_ptr<Acc>(), shape, g.x.data_ptr<XT>(),
        g.skip.data_ptr<ST>(), shape.weighted ? g.selection.data_ptr<Acc>() : nullptr,
        partial.data_ptr<Acc>());
  });
  // The blocks' partial sums, added in block order: [G, 2, H].
  const at::Tensor sums = at::empty({shape.groups, 2, h}, partial.options());
  if (partial.scalar_type() == at::kDouble) {
    add_blocks(partial.data_ptr<double>(), shape.groups, blocks, 2 * h, sums.data_ptr<double>());
  } else {
    add_blocks(partial.data_ptr<float>(), shape.groups, blocks, 2 * h, sums.data_ptr<float>());
  }
  g.weight = sums.select(1, 0);
  g.bias = sums.select(1, 1);
  return g;
}

}  // namespace tft::glu_add_norm_cpu
