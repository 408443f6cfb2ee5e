// Rows affine in one number each: group g's row r is scalars[g, r] * weight[g, :] + bias[g, :].
// A real input's embedding is such a row (x w + b), and so is the first layer of its GRN,
// x (W1 w) + (W1 b + b1) (model/variable_selection.h). The fused functions that read them
// (glu_add_norm.h, linear_dropout_linear.h) take them in this form and make each row where
// they use it, in forward and again in backward: [G, R, H] values never kept, from [G, R] numbers.
#pragma once

#include <ATen/core/Tensor.h>

namespace tft {

struct AffineRows {
  at::Tensor scalars;  // [G, R]
  at::Tensor weight;   // [G, H]
  at::Tensor bias;     // [G, H]
};

}  // namespace tft
