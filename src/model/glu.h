// Gated linear unit (TFT paper, section 4.1): GLU(x) = (W4 x + b4) * sigmoid(W5 x + b5), with
// dropout on its input as in pytorch-forecasting. It lets the network suppress a whole block (the
// gate near zero) when a simpler model suffices.
#pragma once

#include "model/quantizable_linear.h"
#include "nn/dropout.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

class GatedLinearUnitImpl : public torch::nn::Module {
 public:
  GatedLinearUnitImpl(int64_t input_size, int64_t output_size, double dropout);

  // [..., input_size] -> [..., output_size]
  torch::Tensor forward(const torch::Tensor& x);
  // The product before the gating, [..., 2 * output_size]: value, then gate (forward is
  // at::glu of it); GateAddNorm fuses the gating with its sum and norm (glu_add_norm.h).
  torch::Tensor project(const torch::Tensor& x);

  const Dropout& dropout() const { return dropout_; }
  const QuantizableLinear& linear() const { return fc_; }

 private:
  Dropout dropout_;
  // Value and gate in one matmul: [..., 2 * output_size], split by at::glu.
  QuantizableLinear fc_;
};
TORCH_MODULE(GatedLinearUnit);

}  // namespace tft
