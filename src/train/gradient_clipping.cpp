#include "train/gradient_clipping.h"

#include <cmath>

#include <ATen/ops/stack.h>
#include <torch/utils.h>

namespace tft {

double clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> norms;
  for (const at::Tensor& p : parameters) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    norms.push_back(g.norm(2).to(at::kDouble));
  }
  if (grads.empty()) return 0.0;
  const double total = at::stack(norms).norm(2).item<double>();
  if (!std::isfinite(total) || max_norm <= 0.0 || total <= max_norm) return total;
  const double coefficient = max_norm / (total + 1e-6);
  for (at::Tensor& g : grads) g.mul_(coefficient);
  return total;
}

}  // namespace tft
