// Variable selection network (TFT paper, section 4.2): a softmax over the variables, computed by a
// GRN from all embedded variables together (and the static selection context), weights the
// variables after each went through its own GRN. The weights are the model's per-step
// variable importances.
#pragma once

#include "model/grn.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace tft {

struct VariableSelectionOutput {
  torch::Tensor output;   // [..., hidden]
  torch::Tensor weights;  // [..., num_inputs], each row sums to 1
};

class VariableSelectionNetworkImpl : public torch::nn::Module {
 public:
  // with_context: the weights GRN takes a [B, hidden] context.
  VariableSelectionNetworkImpl(int64_t num_inputs, int64_t hidden_size, double dropout,
                               bool with_context);

  // embedded: [B, ..., num_inputs, hidden]; context: [B, hidden] or undefined.
  VariableSelectionOutput forward(const torch::Tensor& embedded,
                                  const torch::Tensor& context = {});

  int64_t num_inputs() const { return num_inputs_; }

 private:
  int64_t num_inputs_;
  int64_t hidden_size_;
  // Null for a single variable: its weight is 1 whatever the GRN says (pytorch-forecasting
  // skips it too), so its parameters would never learn anything.
  GatedResidualNetwork weights_grn_{nullptr};
  std::vector<GatedResidualNetwork> variable_grns_;
};
TORCH_MODULE(VariableSelectionNetwork);

}  // namespace tft
