#include "model/gate_add_norm.h"

namespace tft {

GateAddNormImpl::GateAddNormImpl(int64_t input_size, int64_t output_size, double dropout)
    : gate_(register_module("gate", GatedLinearUnit(input_size, output_size, dropout))),
      norm_(register_module("norm",
                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({output_size})))) {}

torch::Tensor GateAddNormImpl::forward(const torch::Tensor& x, const torch::Tensor& skip) {
  return norm_(gate_(x) + skip);
}

}  // namespace tft
