// Gated residual network (TFT paper, section 4.1):
//   GRN(a, c) = LayerNorm(skip(a) + GLU(W1 ELU(W2 a + W3 c + b2) + b1))
// The gate lets the block fall back to (a projection of) its input; the optional context c
// (a static covariate context) conditions the block on the series' static inputs.
#pragma once

#include "model/gate_add_norm.h"
#include "model/quantizable_linear.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

class GatedResidualNetworkImpl : public torch::nn::Module {
 public:
  // context_size 0: no context input. When input_size != output_size the skip path is a
  // linear projection (as in NVIDIA's implementation) so the residual can be added.
  GatedResidualNetworkImpl(int64_t input_size, int64_t hidden_size, int64_t output_size,
                           double dropout, int64_t context_size = 0);

  // x: [B, ..., input_size]; context: [B, context_size] (broadcast over the middle axes) or
  // undefined. Returns [B, ..., output_size].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context = {});

  // forward() from fc1's output (before the context is added) and the skip path's output,
  // for a caller that computes those two more cheaply than from x (variable_selection.cpp).
  // fc1_output is consumed: without a context its ELU is taken in place.
  torch::Tensor forward_projected(const torch::Tensor& fc1_output, const torch::Tensor& residual,
                                  const torch::Tensor& context = {});

  bool has_context() const { return !context_.is_empty(); }
  const QuantizableLinear& fc1() const { return fc1_; }
  const QuantizableLinear& fc2() const { return fc2_; }
  const GateAddNorm& gate_norm() const { return gate_norm_; }
  // Null when input_size == output_size (the skip path is the identity).
  const QuantizableLinear& skip() const { return skip_; }

 private:
  QuantizableLinear fc1_;
  // Registered only with a context; bias-free since fc1 already has one.
  QuantizableLinear context_{nullptr};
  QuantizableLinear fc2_;
  GateAddNorm gate_norm_;
  QuantizableLinear skip_{nullptr};
};
TORCH_MODULE(GatedResidualNetwork);

}  // namespace tft
