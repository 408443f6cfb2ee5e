// Gradient clipping by global norm (Pascanu et al. 2013), as torch.nn.utils.clip_grad_norm_:
// when the L2 norm of all gradients together exceeds `max_norm`, every gradient is scaled by
// max_norm / (norm + 1e-6). Gradients are left untouched when no clipping is needed and when
// the norm is not finite, so the caller can report the NaN/Inf instead of spreading it into the
// weights.
//
// The norm stays on the gradients' device and nothing waits for it: on a GPU the decision to
// scale is a scale factor computed there (1 when no clipping is needed, and x * 1 == x exactly),
// so the host never stalls for it. On the CPU the factor is read directly and the scaling
// skipped when it is 1; both give the same numbers.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace tft {

// Returns the global L2 norm of the gradients before clipping, a 0-dim double tensor on the
// gradients' device (a CPU 0 when none is defined). max_norm <= 0 turns clipping off: the norm
// is only measured.
at::Tensor clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace tft
