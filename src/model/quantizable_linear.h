// A linear layer y = x W^T + b that quantization-aware training can fake-quantize: with
// quantizers attached (attach_fake_quantizers), the weight is fake-quantized per output channel
// and the input per tensor before the product (model/fake_quantizer.h). Without them it is
// torch::nn::Linear: the same parameters, names ("weight", "bias"), initial values (drawn the
// same way from LibTorch's default generator) and kernel.
#pragma once

#include "model/model_config.h"
#include "nn/fake_quantizer.h"

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

class QuantizableLinearImpl : public torch::nn::Module {
 public:
  QuantizableLinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias = true);

  at::Tensor forward(const at::Tensor& x);

  // The weight and the input as forward multiplies them (themselves without quantizers), for
  // layers that fuse this one's product into a larger one.
  at::Tensor effective_weight();
  at::Tensor effective_input(const at::Tensor& x);

  // Adds the weight and input quantizers (once; ConfigError-free: `quantization` is valid).
  void attach_fake_quantizers(const QuantizationConfig& quantization);
  bool quantized() const { return static_cast<bool>(weight_quantizer_); }

  std::int64_t in_features() const { return in_features_; }
  std::int64_t out_features() const { return out_features_; }

  at::Tensor weight;  // [out_features, in_features]
  at::Tensor bias;    // [out_features], undefined without a bias

 private:
  std::int64_t in_features_, out_features_;
  FakeQuantizer weight_quantizer_{nullptr};
  FakeQuantizer input_quantizer_{nullptr};
};
TORCH_MODULE(QuantizableLinear);

// Attaches quantizers to every QuantizableLinear in `root`'s tree.
void attach_fake_quantizers(torch::nn::Module& root, const QuantizationConfig& quantization);

}  // namespace tft
