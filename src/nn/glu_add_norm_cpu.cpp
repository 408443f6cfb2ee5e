#include "nn/glu_add_norm_cpu.h"

#include "nn/cpu_isa.h"
#include "nn/lane_math.h"

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

// The skip of the rows: an affine group's row made from its number into a buffer, another
// group's read from the skip tensor.
template <typename ST, typename Acc>
struct SkipRows {
  const ST* dense;     // [(G - Ga) * R, H]
  const Acc* scalars;  // [Ga, R]
  const Acc* weight;   // [Ga, H]
  const Acc* bias;     // [Ga, H]
  std::int64_t affine_groups, rows, h;

  bool affine(std::int64_t g) const { return g < affine_groups; }
};

// Where backward writes: the gradients of x, of the skip tensor's rows, of the selection and of
// the affine skip's numbers, and each task's partial sums [tasks, 4, H] of the gradients of the
// weight, the bias, the affine skip's weight and its bias (added up in task order afterwards).
template <typename XT, typename ST, typename Acc>
struct Gradients {
  XT* x;
  ST* dense;
  Acc* selection;
  Acc* scalars;
  Acc* partial;
};

// The kernels, once per instruction set (glu_add_norm_rows.inc).
#define TFT_ROWS_FILE "nn/glu_add_norm_rows.inc"
#include "nn/per_isa_kernels.inc"

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

namespace {

// The data of t, or null when it is undefined or empty.
template <typename Acc>
Acc* pointer_or_null(const at::Tensor& t) {
  return t.defined() && t.numel() > 0 ? t.data_ptr<Acc>() : nullptr;
}

template <typename ST, typename Acc>
SkipRows<ST, Acc> skip_rows(const at::Tensor& dense, const AffineSkip& a, const Shape& s) {
  return {dense.numel() > 0 ? dense.data_ptr<ST>() : nullptr,
          pointer_or_null<Acc>(a.scalars),
          pointer_or_null<Acc>(a.weight),
          pointer_or_null<Acc>(a.bias),
          s.affine_groups,
          s.rows,
          s.width};
}

}  // namespace

Forward forward(const at::Tensor& x, const at::Tensor& skip, const AffineSkip& affine,
                const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& selection,
                double eps, const Shape& shape) {
  const at::ScalarType acc = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const std::int64_t n = shape.groups * shape.rows;
  const std::int64_t out_rows = shape.weighted ? shape.rows : n;
  Forward f{at::empty({out_rows, shape.width}, x.options().dtype(acc)),
            at::empty({n}, x.options().dtype(acc)), at::empty({n}, x.options().dtype(acc))};
  dispatch(x, skip, [&](auto xt, auto st, auto at_) {
    using XT = decltype(xt);
    using ST = decltype(st);
    using Acc = decltype(at_);
    auto* rows = &portable::forward_rows<XT, ST, Acc>;
#ifdef TFT_CPU_X86
    if (cpu_isa() == CpuIsa::kAvx2) rows = &avx2::forward_rows<XT, ST, Acc>;
#endif
    rows(x.data_ptr<XT>(), skip_rows<ST, Acc>(skip, affine, shape), weight.data_ptr<Acc>(),
         bias.data_ptr<Acc>(), pointer_or_null<Acc>(selection), eps, shape, f.out.data_ptr<Acc>(),
         f.mean.data_ptr<Acc>(), f.rstd.data_ptr<Acc>());
  });
  return f;
}

Backward backward(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& skip,
                  const AffineSkip& affine, const at::Tensor& weight, const at::Tensor& bias,
                  const at::Tensor& selection, const at::Tensor& mean, const at::Tensor& rstd,
                  const Shape& shape) {
  const std::int64_t h = shape.width;
  const std::int64_t blocks = (shape.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  Backward g{at::empty_like(x), at::empty_like(skip), {}, {}, {}, {}};
  if (shape.weighted) g.selection = at::empty_like(selection);
  if (shape.affine_groups > 0) g.affine.scalars = at::empty_like(affine.scalars);
  const at::Tensor partial =
      at::empty({shape.groups, blocks, 4, h}, weight.options().dtype(mean.scalar_type()));
  dispatch(x, skip, [&](auto xt, auto st, auto at_) {
    using XT = decltype(xt);
    using ST = decltype(st);
    using Acc = decltype(at_);
    const Gradients<XT, ST, Acc> d{g.x.data_ptr<XT>(),
                                   g.skip.numel() > 0 ? g.skip.data_ptr<ST>() : nullptr,
                                   pointer_or_null<Acc>(g.selection),
                                   pointer_or_null<Acc>(g.affine.scalars), partial.data_ptr<Acc>()};
    auto* rows = &portable::backward_rows<XT, ST, Acc>;
#ifdef TFT_CPU_X86
    if (cpu_isa() == CpuIsa::kAvx2) rows = &avx2::backward_rows<XT, ST, Acc>;
#endif
    rows(grad_out.data_ptr<Acc>(), x.data_ptr<XT>(), skip_rows<ST, Acc>(skip, affine, shape),
         weight.data_ptr<Acc>(), bias.data_ptr<Acc>(), pointer_or_null<Acc>(selection),
         mean.data_ptr<Acc>(), rstd.data_ptr<Acc>(), shape, d);
  });
  // The blocks' partial sums, added in block order: [G, 4, H].
  const at::Tensor sums = at::empty({shape.groups, 4, h}, partial.options());
  if (partial.scalar_type() == at::kDouble) {
    add_blocks(partial.data_ptr<double>(), shape.groups, blocks, 4 * h, sums.data_ptr<double>());
  } else {
    add_blocks(partial.data_ptr<float>(), shape.groups, blocks, 4 * h, sums.data_ptr<float>());
  }
  g.weight = sums.select(1, 0);
  g.bias = sums.select(1, 1);
  if (shape.affine_groups > 0) {
    const at::Tensor affine_sums = sums.narrow(0, 0, shape.affine_groups);
    g.affine.weight = affine_sums.select(1, 2);
    g.affine.bias = affine_sums.select(1, 3);
  }
  return g;
}

}  // namespace tft::glu_add_norm_cpu
