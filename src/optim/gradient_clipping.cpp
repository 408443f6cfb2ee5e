#include "optim/gradient_clipping.h"

#include <cmath>

#include <ATen/TensorOperators.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>
#include <torch/utils.h>

namespace tft {

at::Tensor clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> norms;
  for (const at::Tensor& p : parameters) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    norms.push_back(g.norm(2).to(at::kDouble));
  }
  if (grads.empty()) return at::scalar_tensor(0.0, at::kDouble);
  const at::Tensor total = at::stack(norms).norm(2);
  if (max_norm <= 0.0) return total;
  if (total.device().is_cpu()) {
    const double value = total.item<double>();
    if (!std::isfinite(value) || value <= max_norm) return total;
    const double coefficient = max_norm / (value + 1e-6);
    for (at::Tensor& g : grads) g.mul_(coefficient);
    return total;
  }
  // The same rule without reading the norm back: the factor is 1 unless clipping applies.
  const at::Tensor clip = at::isfinite(total).logical_and(total > max_norm);
  const at::Tensor coefficient = at::where(clip, max_norm / (total + 1e-6), at::ones_like(total));
  for (at::Tensor& g : grads) g.mul_(coefficient);
  return total;
}

}  // namespace tft
