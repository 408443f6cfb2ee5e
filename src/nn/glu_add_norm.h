// LayerNorm(skip + GLU(x)) as one autograd function: the point-wise tail of every gate, add and
// norm (gate_add_norm.h) and of the variable selection's grouped GRNs with their weighted sum
// (variable_selection.h).
//
// Unfused, autograd keeps the GLU's input (2H) and the norm's input (H) for backward. This
// function keeps the GLU's input and the skip, which its caller usually keeps anyway (a GRN's
// own input, which its first product saves), plus a mean and a reciprocal standard deviation per
// row; backward recomputes the GLU, the sum and the normalised values from them. One row of H
// values less per use, and no intermediate tensor in forward.
//
// Groups: x [G, R, 2H], skip [G, R, H] and weight, bias [G, H] normalise each row of group g with
// g's own scale and shift (the grouped variable GRNs: one LayerNorm per variable). Without groups
// (weight [H]) x is [..., 2H] and skip [..., H], as one group.
//
// Precision: in float32 (double for double inputs, for gradcheck); a bfloat16 or half x or skip
// (mixed precision) is widened as it is read, as GateAddNorm's unfused sum and norm run in float32.
// The output is float32 (double). Gradients come back in each input's own dtype.
//
// On the CPU (float32, bfloat16, half and double), kernels over at::parallel_for, one row of H at
// a time, deterministic for any thread count: the weight's gradient is summed over fixed blocks of
// rows, then over the blocks in order. The rows are vectorised (lane_math.h), with AVX2 where the
// CPU has it (cpu_isa.h); every instruction set gives the same bits. Elsewhere (CUDA), the same
// function over ATen operators (GluAddNormPath::Aten), so the memory saving holds there too; the
// CPU can run that path for tests.
#pragma once

#include <ATen/core/Tensor.h>

#include "nn/affine_rows.h"

namespace tft {

enum class GluAddNormPath {
  kAuto,  // the CPU kernels where they apply, else ATen operators
  kAten,  // ATen operators on every device (the CUDA path; tests compare it with the kernels)
};

// x: [G, R, 2H] (or [..., 2H] with weight [H]); skip: [G, R, H] (or [..., H], x's leading shape);
// weight, bias: [G, H] (or [H]), float32 or double. The output has x's leading shape, with H
// last. eps: the norm's epsilon.
at::Tensor glu_add_norm(const at::Tensor& x, const at::Tensor& skip, const at::Tensor& weight,
                        const at::Tensor& bias, double eps,
                        GluAddNormPath path = GluAddNormPath::kAuto);

// The variable selection's weighted sum over the groups as well: with selection [R, G], returns
// [R, H] = sum over g of selection[r, g] * glu_add_norm(...)[r, g, :] (groups required). The
// [R, G, H] rows are never kept, nor made whole: backward recomputes each from x and skip.
at::Tensor glu_add_norm_weighted(const at::Tensor& x, const at::Tensor& skip,
                                 const at::Tensor& weight, const at::Tensor& bias,
                                 const at::Tensor& selection, double eps,
                                 GluAddNormPath path = GluAddNormPath::kAuto);

// Skip rows affine in one number (affine_rows.h): a real input's embedding, as the variable
// selection makes it. Made row by row where it is used, never kept: scalars [Ga, R], weight and
// bias [Ga, H].
using AffineSkip = AffineRows;

// glu_add_norm_weighted with the first Ga groups' skip affine: skip then holds the other
// groups' rows, [G - Ga, R, H] (G - Ga may be 0). affine.scalars undefined: no affine groups.
at::Tensor glu_add_norm_weighted(const at::Tensor& x, const AffineSkip& affine,
                                 const at::Tensor& skip, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& selection, double eps,
                                 GluAddNormPath path = GluAddNormPath::kAuto);

}  // namespace tft
