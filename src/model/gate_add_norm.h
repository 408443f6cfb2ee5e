// Gate, add and norm (TFT paper, sections 4.1 and 4.5):
// LayerNorm(skip + GLU(x)). Every sub-layer of the temporal fusion decoder is wrapped in one,
// so the gate can bypass a sub-layer the data does not need.
#pragma once

#include "model/glu.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace tft {

class GateAddNormImpl : public torch::nn::Module {
 public:
  GateAddNormImpl(int64_t input_size, int64_t output_size, double dropout);

  // x: [..., input_size], skip: [..., output_size] -> [..., output_size]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& skip);

  const GatedLinearUnit& gate() const { return gate_; }
  const torch::nn::LayerNorm& norm() const { return norm_; }

 private:
  GatedLinearUnit gate_;
  torch::nn::LayerNorm norm_;
};
TORCH_MODULE(GateAddNorm);

}  // namespace tft
