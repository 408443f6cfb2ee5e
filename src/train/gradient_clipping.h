// Gradient clipping by global norm (Pascanu et al. 2013), as torch.nn.utils.clip_grad_norm_:
// when the L2 norm of all gradients together exceeds `max_norm`, every gradient is scaled by
// max_norm / (norm + 1e-6). Unlike LibTorch's version, gradients are left untouched when no
// clipping is needed (no multiplication by 1) and when the norm is not finite, so the caller
// can report the NaN/Inf instead of spreading it into the weights.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace tft {

// Returns the global L2 norm of the gradients before clipping (0 when none is defined).
// max_norm <= 0 turns clipping off: the norm is only measured.
double clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace tft
