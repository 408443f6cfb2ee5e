#include "optim/gradient_buffers.h"

#include <ATen/ops/zeros_like.h>
#include <torch/utils.h>

namespace tft {

void ensure_gradients(const std::vector<at::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  for (const at::Tensor& p : parameters) {
    at::Tensor& grad = const_cast<at::Tensor&>(p).mutable_grad();
    if (!grad.defined()) grad = at::zeros_like(p);
  }
}

void zero_gradients(const std::vector<at::Tensor>& parameters) {
  for (const at::Tensor& p : parameters) {
    at::Tensor& grad = const_cast<at::Tensor&>(p).mutable_grad();
    if (grad.defined()) {
      grad.detach_();
      grad.zero_();
    }
  }
}

}  // namespace tft
