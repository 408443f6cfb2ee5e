// Variable selection network (TFT paper, section 4.2): a softmax over the variables, computed by a
// GRN from all embedded variables together (and the static selection context), weights the
// variables after each went through its own GRN. The weights are the model's per-step
// variable importances.
//
// How it runs (the parameters are those of one GRN per variable, as the paper draws it):
//  * The variables' GRNs run as one group: their weights are stacked and every layer is one
//    batched matrix product over [variables, rows, hidden] instead of one small product per
//    variable, a fraction of the operator calls (what bounds a small model and a GPU).
//  * Real variables come in unexpanded (EmbeddedVariables): their embedding x * w + b is affine
//    in the one value x, so the first layer of their GRN, W1 (x w + b) + b1, is
//    x (W1 w) + (W1 b + b1): W1 meets w once per step instead of once per row, and the
//    layer costs an outer product instead of a hidden x hidden matrix product per row. The
//    weights GRN's first layer and skip projection, over all variables flattened, split the
//    same way. The results equal the plain formulas up to rounding.
#pragma once

#include "model/grn.h"
#include "model/input_embedding.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <vector>

namespace tft {

struct VariableSelectionOutput {
  torch::Tensor output;   // [..., hidden]
  torch::Tensor weights;  // [..., num_inputs], each row sums to 1
};

// The variables' GRN parameters stacked over the variables, [n, ...] each: what the grouped
// products read. select() stacks them itself. A caller that runs select() on several pieces of
// one step (time chunks) stacks them once and hands them to every piece: each stack is a node
// whose backward splits its gradient n ways, so stacking per piece costs every piece about
// 4 n operator calls per tensor, forward, recompute and backward.
struct StackedVariableGrns {
  static constexpr std::size_t kTensors = 8;
  torch::Tensor w1, b1, w2, b2, wg, bg, norm_w, norm_b;

  // The kTensors tensors, in the order above.
  std::vector<torch::Tensor> tensors() const;
  // The inverse of tensors(), from tensors[first, first + kTensors).
  static StackedVariableGrns from(const std::vector<torch::Tensor>& tensors, std::size_t first);
};

class VariableSelectionNetworkImpl : public torch::nn::Module {
 public:
  // with_context: the weights GRN takes a [B, hidden] context.
  VariableSelectionNetworkImpl(int64_t num_inputs, int64_t hidden_size, double dropout,
                               bool with_context);

  // embedded: [B, ..., num_inputs, hidden]; context: [B, hidden] or undefined.
  VariableSelectionOutput forward(const torch::Tensor& embedded, const torch::Tensor& context = {});
  // forward() from variables whose reals are not multiplied out; reals first, then the dense
  // variables, num_inputs in all, over the same leading axes [B, ...].
  // `stacked`: stacked_variable_grns() of this step, or null to stack them here.
  VariableSelectionOutput select(const EmbeddedVariables& embedded,
                                 const torch::Tensor& context = {},
                                 const StackedVariableGrns* stacked = nullptr);

  // Whether select() runs the variables' GRNs as one group (not under QAT, whose fake
  // quantizers see each GRN's own layers): only then does it read stacked parameters.
  bool groups_variables() const;
  // The variables' GRN parameters stacked, part of the autograd graph like any use of them.
  StackedVariableGrns stacked_variable_grns() const;

  int64_t num_inputs() const { return num_inputs_; }
  // Variable i's GRN and the weights GRN (null for a single variable), as the paper draws
  // them: forward() computes the same function, grouped.
  const GatedResidualNetwork& variable_grn(int64_t i) const;
  const GatedResidualNetwork& weights_grn() const { return weights_grn_; }

 private:
  torch::Tensor selection_weights(const EmbeddedVariables& embedded, const torch::Tensor& context,
                                  c10::IntArrayRef leading, int64_t rows);
  // Every variable's GRN over the rows, summed with the selection weights [rows, n]: [rows,
  // hidden]. The GRNs' outputs [rows, n, hidden] are never kept (glu_add_norm_weighted).
  torch::Tensor weighted_variable_grns(const EmbeddedVariables& embedded,
                                       const torch::Tensor& weights, int64_t rows,
                                       const StackedVariableGrns& stacked);
  // select() with fake-quantized linear layers (QAT): each GRN through its own layers, since
  // the grouped products above fold the real embeddings into the first layer, where the
  // layer's input (which QAT quantizes) never exists.
  VariableSelectionOutput select_quantized(const EmbeddedVariables& embedded,
                                           const torch::Tensor& context);

  int64_t num_inputs_;
  int64_t hidden_size_;
  // Null for a single variable: its weight is 1 whatever the GRN says (pytorch-forecasting
  // skips it too), so its parameters would never learn anything.
  GatedResidualNetwork weights_grn_{nullptr};
  std::vector<GatedResidualNetwork> variable_grns_;
};
TORCH_MODULE(VariableSelectionNetwork);

}  // namespace tft
