// The parameters' gradient buffers, kept allocated across steps and zeroed in place (no new
// allocations per step, so activation measurements see only activations).
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace tft {

// Gives every parameter a zero gradient buffer where it has none yet.
void ensure_gradients(const std::vector<at::Tensor>& parameters);

// Zeroes the gradient buffers that exist (detached from any graph first).
void zero_gradients(const std::vector<at::Tensor>& parameters);

}  // namespace tft
