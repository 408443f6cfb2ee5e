#include "model/quantile_head.h"

#include <torch/utils.h>

namespace tft {

QuantileHeadImpl::QuantileHeadImpl(int64_t hidden_size, int64_t num_quantiles)
    : projection_(register_module("projection", QuantizableLinear(hidden_size, num_quantiles))) {}

torch::Tensor QuantileHeadImpl::forward(const torch::Tensor& x) { return projection_(x); }

void QuantileHeadImpl::zero_projection() {
  torch::NoGradGuard no_grad;
  for (auto& parameter : projection_->parameters()) parameter.zero_();
}

}  // namespace tft
