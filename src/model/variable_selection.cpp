#include "model/variable_selection.h"

#include <ATen/ops/addcmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/softmax.h>
#include <c10/util/Exception.h>

namespace tft {

VariableSelectionNetworkImpl::VariableSelectionNetworkImpl(int64_t num_inputs,
                                                           int64_t hidden_size, double dropout,
                                                           bool with_context)
    : num_inputs_(num_inputs), hidden_size_(hidden_size) {
  TORCH_CHECK(num_inputs > 0, "VariableSelectionNetwork: needs at least one variable");
  if (num_inputs > 1) {
    // All variables flattened in, one logit per variable out.
    weights_grn_ = register_module(
        "weights_grn", GatedResidualNetwork(num_inputs * hidden_size, hidden_size, num_inputs,
                                            dropout, with_context ? hidden_size : 0));
  }
  for (int64_t i = 0; i < num_inputs; ++i) {
    variable_grns_.push_back(register_module(
        "variable_grn_" + std::to_string(i),
        GatedResidualNetwork(hidden_size, hidden_size, hidden_size, dropout)));
  }
}

VariableSelectionOutput VariableSelectionNetworkImpl::forward(const torch::Tensor& embedded,
                                                              const torch::Tensor& context) {
  TORCH_CHECK(embedded.dim() >= 3 && embedded.size(-2) == num_inputs_ &&
                  embedded.size(-1) == hidden_size_,
              "VariableSelectionNetwork: expected [B, ..., ", num_inputs_, ", ", hidden_size_,
              "], got ", embedded.sizes());
  torch::Tensor weights;
  if (weights_grn_) {
    auto flat_sizes = embedded.sizes().vec();
    flat_sizes.pop_back();
    flat_sizes.back() = num_inputs_ * hidden_size_;
    weights = at::softmax(weights_grn_(embedded.reshape(flat_sizes), context), /*dim=*/-1);
  } else {
    auto sizes = embedded.sizes().vec();
    sizes.pop_back();  // [..., 1]
    weights = at::ones(sizes, embedded.options());
  }
  // unbind, not select per variable: its backward stacks the n gradients once, where n
  // selects would each scatter into a zero tensor of the full size (n^2 work).
  const std::vector<torch::Tensor> variables = embedded.unbind(-2);
  std::vector<torch::Tensor> processed;
  processed.reserve(variable_grns_.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    processed.push_back(variable_grns_[i](variables[i]));
  }
  // The weighted sum of the processed variables, one fused multiply-add per variable: a
  // batched [1, n] x [n, hidden] matmul per row would run B*T tiny matmuls, and stacking
  // first would copy every processed variable once more.
  const std::vector<torch::Tensor> w = weights.unsqueeze(-1).unbind(-2);  // [..., 1] each
  torch::Tensor output = processed[0] * w[0];
  for (size_t i = 1; i < processed.size(); ++i) {
    output = at::addcmul(output, processed[i], w[i]);
  }
  return {output, weights};
}

}  // namespace tft
