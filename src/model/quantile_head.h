// The output layer: one linear map from the decoder's hidden state to one forecast per
// quantile (TFT paper, section 4.6), all quantiles from the same features.
#pragma once

#include "model/quantizable_linear.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

class QuantileHeadImpl : public torch::nn::Module {
 public:
  QuantileHeadImpl(int64_t hidden_size, int64_t num_quantiles);

  // [..., hidden] -> [..., num_quantiles]
  torch::Tensor forward(const torch::Tensor& x);

  // Zero weights and biases: every quantile forecasts 0 in the normalised target's units,
  // which is the target's centre (OutputInit::Center).
  void zero_projection();

 private:
  QuantizableLinear projection_;
};
TORCH_MODULE(QuantileHead);

}  // namespace tft
