// The CPU kernels of glu_add_norm (glu_add_norm.h): forward and backward over rows of H values,
// at::parallel_for over rows, in float32 (double for double inputs).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "nn/glu_add_norm.h"

namespace tft::glu_add_norm_cpu {

struct Shape {
  std::int64_t groups = 1;
  std::int64_t rows = 0;   // per group
  std::int64_t width = 0;  // H: the norm's width; x has 2H per row
  bool weighted = false;   // output [R, H]: the groups' rows summed with selection weights [R, G]
  // The first groups' skip rows are affine in one number: scalars[g, r] * skip_weight[g, :] +
  // skip_bias[g, :] (the variable selection's real inputs); the skip tensor holds the rest.
  std::int64_t affine_groups = 0;
};

// The affine skip (glu_add_norm.h) of Shape::affine_groups groups, in the accumulation dtype,
// contiguous; undefined parts when Ga is 0.
using tft::AffineSkip;

// Whether the kernels take these inputs: CPU tensors, x and skip float32, bfloat16 or half with
// float32 weights, or everything double.
bool applies(const at::Tensor& x, const at::Tensor& skip, const at::Tensor& weight);

// x [G*R, 2H], skip [(G - Ga)*R, H], weight and bias [G, H], all contiguous; selection [R, G] in
// the accumulation dtype when shape.weighted, else undefined. Returns the output ([G*R, H], or [R,
// H] weighted), and the mean and reciprocal standard deviation of each row [G*R], in the
// accumulation dtype.
struct Forward {
  at::Tensor out, mean, rstd;
};
Forward forward(const at::Tensor& x, const at::Tensor& skip, const AffineSkip& affine,
                const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& selection,
                double eps, const Shape& shape);

// grad_out laid out as forward's output. Gradients of x and skip in their own dtypes, of the
// weight, bias, selection (when weighted) and affine skip (when Ga > 0) in theirs.
struct Backward {
  at::Tensor x, skip, weight, bias, selection;
  AffineSkip affine;
};
Backward backward(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& skip,
                  const AffineSkip& affine, const at::Tensor& weight, const at::Tensor& bias,
                  const at::Tensor& selection, const at::Tensor& mean, const at::Tensor& rstd,
                  const Shape& shape);

}  // namespace tft::glu_add_norm_cpu
