#include "model/quantile_head.h"

namespace tft {

QuantileHeadImpl::QuantileHeadImpl(int64_t hidden_size, int64_t num_quantiles)
    : projection_(register_module("projection", QuantizableLinear(hidden_size, num_quantiles))) {}

torch::Tensor QuantileHeadImpl::forward(const torch::Tensor& x) { return projection_(x); }

}  // namespace tft
