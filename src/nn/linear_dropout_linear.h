// Two grouped linear layers with a dropout between them, as one autograd function that keeps
// the first layer's input and not the second's:
//   out[g] = dropout(x[g] W1[g]^T + b1[g]) W2[g]^T + b2[g]
// (the middle of a gated residual network: its second product, the gate's dropout and the
// gate's product; variable_selection.cpp runs every variable's at once).
//
// Unfused, autograd keeps x (the first product's input, for W1's gradient) and the middle,
// [G, R, M] (the second product's input, for W2's gradient). This function keeps x alone and
// makes the middle again in backward: one product more per step, [G, R, I] x [I, M], for one
// [G, R, M] tensor less from forward to backward. The dropout's mask is not kept either: its
// seed is (dropout.h), and backward draws the same mask again. In a checkpointed segment's
// rerun (checkpoint::is_recomputing()) it keeps the middle: there backward follows at once, so
// the middle lives through one chunk's backward, and the product that would make it a third time
// is skipped.
//
// Products run in the dtype autocast gives them in forward (bfloat16 under bf16-mixed), in
// backward too, where autocast is off: the recomputed middle has the forward's bits, and each
// gradient comes back in its input's dtype. Deterministic as the products and sums are: the
// same bits in every checkpointing strategy.
//
// CPU only, where the mask is regenerated from its seed; elsewhere the unfused operators
// (with Dropout's mask, which that path keeps anyway), for both forms below.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include "nn/affine_rows.h"

namespace tft {

// x [G, R, I]; w1 [G, M, I], b1 [G, M]; w2 [G, O, M], b2 [G, O]. dropout: the rate, 0 for
// none (evaluation). Returns [G, R, O].
at::Tensor linear_dropout_linear(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1,
                                 const at::Tensor& w2, const at::Tensor& b2, double dropout);

// The variable selection's form, the ELU before the first product included for the groups
// whose input is affine in one number per row (a real variable's first GRN layer):
//   x = [ELU(affine rows, made in `dtype`) for the first Ga groups; elu_dense for the others]
// and then linear_dropout_linear(x, ...). The affine groups' x is not kept either: backward
// makes it again from the [Ga, R] numbers (an outer product and an ELU per element, no matrix
// product), so from forward to backward the function keeps one [Ga, R, I] tensor less than
// linear_dropout_linear would. elu_dense: [G - Ga, R, I], the other groups' x, already through
// their ELU (kept, as that ELU keeps its output anyway); undefined or 0 groups when every group
// is affine. dtype: the products' dtype (bfloat16 under bf16-mixed), which the affine rows are
// cast to before their ELU, as the dense groups' rows come out of their product.
// affine: scalars [Ga, R], weight [Ga, I], bias [Ga, I] (Ga >= 1).
at::Tensor linear_dropout_linear(const AffineRows& affine, const at::Tensor& elu_dense,
                                 const at::Tensor& w1, const at::Tensor& b1, const at::Tensor& w2,
                                 const at::Tensor& b2, double dropout, at::ScalarType dtype);

}  // namespace tft
