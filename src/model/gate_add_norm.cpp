#include "model/gate_add_norm.h"

#include "model/precision.h"

namespace tft {

GateAddNormImpl::GateAddNormImpl(int64_t input_size, int64_t output_size, double dropout)
    : gate_(register_module("gate", GatedLinearUnit(input_size, output_size, dropout))),
      norm_(register_module("norm",
                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({output_size})))) {}

torch::Tensor GateAddNormImpl::forward(const torch::Tensor& x, const torch::Tensor& skip) {
  // The residual sum and the norm in float32 under mixed precision (a reduced-precision gate
  // output or skip is widened first), as CUDA's autocast runs layer_norm; no-ops in float32.
  return norm_(reduced_to_float(gate_(x)) + reduced_to_float(skip));
}

}  // namespace tft
