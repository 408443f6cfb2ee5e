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
// seed is (dropout.h), and backward draws the same mask again.
//
// Products run in the dtype autocast gives them in forward (bfloat16 under bf16-mixed), in
// backward too, where autocast is off: the recomputed middle has the forward's bits, and each
// gradient comes back in its input's dtype. Deterministic as the products and sums are: the
// same bits in every checkpointing strategy.
//
// CPU only, where the mask is regenerated from its seed; elsewhere the unfused operators
// (with Dropout's mask, which that path keeps anyway).
#pragma once

#include <ATen/core/Tensor.h>

namespace tft {

// x [G, R, I]; w1 [G, M, I], b1 [G, M]; w2 [G, O, M], b2 [G, O]. dropout: the rate, 0 for
// none (evaluation). Returns [G, R, O].
at::Tensor linear_dropout_linear(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& b1,
                                 const at::Tensor& w2, const at::Tensor& b2, double dropout);

}  // namespace tft
