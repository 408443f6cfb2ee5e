// Quantile (pinball) loss (TFT paper, section 5), averaged over batch, horizon and quantiles:
//   QL(y, y_hat, q) = max(q * (y - y_hat), (q - 1) * (y - y_hat))
// Under-forecasts cost q per unit, over-forecasts 1 - q, so minimising it makes y_hat the
// q-quantile of y. The quantiles live in a buffer so they follow the module's device.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace tft {

class QuantileLossImpl : public torch::nn::Module {
 public:
  explicit QuantileLossImpl(const std::vector<double>& quantiles);

  // prediction: [..., num_quantiles], target: [...] (the prediction without its last axis).
  // Returns a scalar: the mean loss over every element and quantile.
  torch::Tensor forward(const torch::Tensor& prediction, const torch::Tensor& target);

  int64_t num_quantiles() const { return quantiles_.size(0); }

 private:
  torch::Tensor quantiles_;  // [num_quantiles]
};
TORCH_MODULE(QuantileLoss);

}  // namespace tft
