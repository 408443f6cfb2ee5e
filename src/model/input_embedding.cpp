#include "model/input_embedding.h"

#include <ATen/ops/addcmul.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <c10/util/Exception.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

namespace tft {

InputEmbeddingImpl::InputEmbeddingImpl(int64_t num_reals,
                                       const std::vector<CategoricalVariable>& categoricals,
                                       int64_t hidden_size, double dropout)
    : num_reals_(num_reals), hidden_size_(hidden_size) {
  if (num_reals > 0) {
    real_weight_ = register_parameter("real_weight", at::empty({num_reals, hidden_size}));
    real_bias_ = register_parameter("real_bias", at::empty({num_reals, hidden_size}));
    initialize_own_parameters(at::detail::getDefaultCPUGenerator());
  }
  for (size_t i = 0; i < categoricals.size(); ++i) {
    const auto& variable = categoricals[i];
    const int64_t dim = embedding_dim_for(variable, hidden_size);
    embeddings_.push_back(register_module("embedding_" + std::to_string(i),
                                          torch::nn::Embedding(variable.cardinality, dim)));
    projections_.push_back(dim == hidden_size
                               ? QuantizableLinear(nullptr)
                               : register_module("projection_" + std::to_string(i),
                                                 QuantizableLinear(dim, hidden_size)));
  }
  dropout_ = register_module("dropout", Dropout(dropout));
}

void InputEmbeddingImpl::initialize_own_parameters(at::Generator generator) {
  if (!real_weight_.defined()) return;
  // Like num_reals independent Linear(1, hidden): U(-1, 1) since fan_in is 1.
  torch::NoGradGuard no_grad;
  real_weight_.uniform_(-1.0, 1.0, generator);
  real_bias_.uniform_(-1.0, 1.0, generator);
}

torch::Tensor EmbeddedVariables::materialize() const {
  std::vector<torch::Tensor> parts;
  if (reals.defined()) {
    // [..., n] -> [..., n, 1] * [n, hidden] + [n, hidden], fused in one kernel (a broadcast
    // multiply followed by an add is several times slower on CPU).
    parts.push_back(at::addcmul(real_bias, reals.unsqueeze(-1), real_weight));
  }
  if (dense.defined()) parts.push_back(dense);
  TORCH_CHECK(!parts.empty(), "InputEmbedding: no variables to embed");
  return parts.size() == 1 ? parts.front() : at::cat(parts, /*dim=*/-2);
}

EmbeddedVariables InputEmbeddingImpl::embed(const torch::Tensor& reals,
                                            const torch::Tensor& categoricals) {
  EmbeddedVariables embedded;
  if (num_reals_ > 0) {
    TORCH_CHECK(reals.defined() && reals.size(-1) == num_reals_, "InputEmbedding: expected ",
                num_reals_, " real columns");
    embedded.reals = reals;
    embedded.real_weight = real_weight_;
    embedded.real_bias = real_bias_;
  }
  if (!embeddings_.empty()) {
    TORCH_CHECK(categoricals.defined() && categoricals.size(-1) == num_categoricals(),
                "InputEmbedding: expected ", num_categoricals(), " categorical columns");
    std::vector<torch::Tensor> columns;
    columns.reserve(embeddings_.size());
    for (size_t i = 0; i < embeddings_.size(); ++i) {
      torch::Tensor e = embeddings_[i](categoricals.select(-1, static_cast<int64_t>(i)));
      if (projections_[i]) e = projections_[i](e);
      columns.push_back(std::move(e));
    }
    embedded.dense = dropout_(at::stack(columns, /*dim=*/-2));
  }
  TORCH_CHECK(embedded.reals.defined() || embedded.dense.defined(),
              "InputEmbedding: no variables to embed");
  return embedded;
}

torch::Tensor InputEmbeddingImpl::forward(const torch::Tensor& reals,
                                          const torch::Tensor& categoricals) {
  return embed(reals, categoricals).materialize();
}

}  // namespace tft
