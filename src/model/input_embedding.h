// Turns one group of raw inputs (reals and categorical codes) into one hidden_size vector per
// variable, the form the variable selection network expects: [..., n_vars, hidden].
//
// Reals: a per-variable Linear(1, hidden), x * w_v + b_v, stored as one [n_reals, hidden]
// weight and bias so all variables go through one broadcast multiply-add instead of n_reals
// tiny matmuls (NVIDIA's implementation does the same).
// Categoricals: nn::Embedding(cardinality, embedding_dim), projected to hidden by a Linear
// when embedding_dim != hidden, so every variable has the same width; then, in training mode,
// dropout (ModelConfig::embedding_dropout) on those hidden-wide vectors, one mask over all of
// the group's categoricals. The mask comes from model/dropout.h, so a recompute draws it again
// bit for bit (checkpoint/generators.h). The reals get none.
#pragma once

#include "model/initialization.h"
#include "model/model_config.h"
#include "model/quantizable_linear.h"
#include "nn/dropout.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace tft {

// One group's embedded variables before the reals are multiplied out. A real variable's
// embedding is affine in its one value (x * w_v + b_v), so a layer that is linear in the
// embedding can be applied to w_v and b_v once and to x as a scalar, instead of to a
// hidden-wide vector per row: the variable selection network does that (variable_selection.h).
struct EmbeddedVariables {
  torch::Tensor reals;        // [..., n_reals]; undefined without reals
  torch::Tensor real_weight;  // [n_reals, hidden]
  torch::Tensor real_bias;    // [n_reals, hidden]
  torch::Tensor dense;        // [..., n_dense, hidden]; undefined without: the categoricals

  int64_t num_reals() const { return reals.defined() ? reals.size(-1) : 0; }
  int64_t num_dense() const { return dense.defined() ? dense.size(-2) : 0; }
  // [..., n_reals + n_dense, hidden]: reals first, then the dense variables.
  torch::Tensor materialize() const;
};

class InputEmbeddingImpl : public torch::nn::Module, public InitializedModule {
 public:
  InputEmbeddingImpl(int64_t num_reals, const std::vector<CategoricalVariable>& categoricals,
                     int64_t hidden_size, double dropout = 0.0);

  // The real projections: U(-1, 1), as num_reals independent Linear(1, hidden) would start.
  void initialize_own_parameters(at::Generator generator) override;

  // reals: [..., num_reals] (floating point; undefined when num_reals == 0),
  // categoricals: [..., n_categoricals] int64 codes (undefined when there are none).
  // Returns [..., num_reals + n_categoricals, hidden]: reals first, then categoricals.
  torch::Tensor forward(const torch::Tensor& reals, const torch::Tensor& categoricals);

  // The same, with the reals left as their values and this module's weights.
  EmbeddedVariables embed(const torch::Tensor& reals, const torch::Tensor& categoricals);

  int64_t num_reals() const { return num_reals_; }
  int64_t num_categoricals() const { return static_cast<int64_t>(embeddings_.size()); }
  int64_t num_variables() const { return num_reals() + num_categoricals(); }

 private:
  int64_t num_reals_;
  int64_t hidden_size_;
  torch::Tensor real_weight_, real_bias_;  // [num_reals, hidden]; undefined without reals
  std::vector<torch::nn::Embedding> embeddings_;
  std::vector<QuantizableLinear> projections_;  // null where embedding_dim == hidden
  Dropout dropout_{nullptr};                    // on the categoricals' hidden-wide vectors
};
TORCH_MODULE(InputEmbedding);

}  // namespace tft
