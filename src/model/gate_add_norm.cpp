#include "model/gate_add_norm.h"

#include "nn/glu_add_norm.h"

namespace tft {

GateAddNormImpl::GateAddNormImpl(int64_t input_size, int64_t output_size, double dropout)
    : gate_(register_module("gate", GatedLinearUnit(input_size, output_size, dropout))),
      norm_(register_module("norm",
                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({output_size})))) {}

torch::Tensor GateAddNormImpl::forward(const torch::Tensor& x, const torch::Tensor& skip) {
  // One autograd function for the gating, the sum and the norm (glu_add_norm.h): in float32 under
  // mixed precision, as CUDA's autocast runs layer_norm, and without keeping the norm's input.
  return glu_add_norm(gate_->project(x), skip, norm_->weight, norm_->bias, norm_->options.eps());
}

}  // namespace tft
