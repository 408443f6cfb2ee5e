#include "model/quantizable_linear.h"

#include "model/weight_casts.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/init.h>

#include <cmath>

namespace tft {

QuantizableLinearImpl::QuantizableLinearImpl(std::int64_t in_features, std::int64_t out_features,
                                             bool bias)
    : in_features_(in_features), out_features_(out_features) {
  TORCH_CHECK(in_features > 0 && out_features > 0,
              "QuantizableLinear: sizes must be positive, got ", in_features, " -> ", out_features);
  weight = register_parameter("weight", at::empty({out_features, in_features}));
  if (bias) this->bias = register_parameter("bias", at::empty({out_features}));
  // torch::nn::Linear's own initialisation, from LibTorch's default generator, so a layer on
  // its own starts as one; a model then re-initialises every layer from its trainer's
  // generators (model/initialization.h).
  const torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    torch::nn::init::uniform_(this->bias, -bound, bound);
  }
}

at::Tensor QuantizableLinearImpl::effective_weight() {
  return weight_quantizer_ ? weight_quantizer_->forward(weight) : product_operand(weight);
}

at::Tensor QuantizableLinearImpl::effective_input(const at::Tensor& x) {
  // Contiguous, because a checkpointed segment's graph-free first pass must run the kernels its
  // recompute runs: at::matmul folds a strided 3-D input (a batch-first LSTM output) into one
  // product or not by whether the weight requires grad, and a fake-quantized weight requires
  // grad only in grad mode (a parameter always does). A contiguous input takes one path either
  // way.
  return input_quantizer_ ? input_quantizer_->forward(x.contiguous()) : x;
}

at::Tensor QuantizableLinearImpl::forward(const at::Tensor& x) {
  // torch::nn::Linear's own function: for an input of more than 2 dimensions it multiplies and
  // then adds the bias, where at::linear fuses the bias into the product (other bits).
  return torch::nn::functional::linear(effective_input(x), effective_weight(),
                                       weight_quantizer_ ? bias : product_operand(bias));
}

void QuantizableLinearImpl::attach_fake_quantizers(const QuantizationConfig& quantization) {
  if (quantized()) return;
  weight_quantizer_ =
      register_module("weight_quantizer", FakeQuantizer(QuantizationScheme::PerChannelSymmetric,
                                                        quantization.weight_bits, out_features_));
  input_quantizer_ = register_module(
      "input_quantizer",
      FakeQuantizer(QuantizationScheme::PerTensorAffine, quantization.activation_bits));
  // New buffers follow the layer's parameters when it was moved already.
  weight_quantizer_->to(weight.device());
  input_quantizer_->to(weight.device());
}

void attach_fake_quantizers(torch::nn::Module& root, const QuantizationConfig& quantization) {
  for (const auto& module : root.modules(/*include_self=*/false)) {
    if (auto* linear = module->as<QuantizableLinearImpl>()) {
      linear->attach_fake_quantizers(quantization);
    }
  }
}

}  // namespace tft
