// Interpretable multi-head attention (TFT paper, section 4.4). Each head has its own query and
// key projection but all heads share ONE value projection, and the heads' outputs are
// averaged before the output projection. Every head then mixes the same values, so the
// head-averaged attention weights describe what the layer actually did: they are the model's
// temporal importance pattern.
//
// Attention is causal over absolute positions: a query at position p sees keys 0..p. The
// per-head query and key projections are each one Linear(hidden, heads * head_size) whose
// output is split into heads (the same as `heads` separate projections, one matmul).
//
// The projections are exposed separately (project_keys, project_values, attend) so a caller
// can compute keys and values once per time chunk and attend in query chunks; forward()
// composes them for the plain case.
#pragma once

#include "model/quantizable_linear.h"
#include "nn/dropout.h"

#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace tft {

struct AttentionResult {
  torch::Tensor output;   // [B, Lq, hidden]
  torch::Tensor weights;  // [B, Lq, Lk], averaged over heads; rows sum to 1, 0 where masked
};

// The score given to masked (future) positions before the softmax: the lowest finite value
// of the dtype, so exp() underflows to exactly 0 without the -inf that would turn a fully
// masked row into NaN, and without a literal (-1e9 overflows half precision).
double attention_mask_value(c10::ScalarType dtype);

class InterpretableMultiHeadAttentionImpl : public torch::nn::Module {
 public:
  InterpretableMultiHeadAttentionImpl(int64_t hidden_size, int64_t heads, double dropout);

  // [B, L, hidden] -> [B, L, heads * head_size] (= hidden)
  torch::Tensor project_keys(const torch::Tensor& x);
  // [B, L, hidden] -> [B, L, head_size]: the value projection all heads share.
  torch::Tensor project_values(const torch::Tensor& x);

  // query_input: [B, Lq, hidden], the un-projected inputs at absolute positions
  // query_start .. query_start + Lq - 1; key_pieces [B, Lk_i, hidden] and value_pieces
  // [B, Lk_i, head_size] come from project_keys/values over consecutive spans that together
  // cover positions 0 .. Lk - 1. They are read piece by piece, never concatenated. Key j is
  // masked for the query at position p when j > p. Every query must see at least one key
  // (query_start < Lk).
  AttentionResult attend(const torch::Tensor& query_input,
                         const std::vector<torch::Tensor>& key_pieces,
                         const std::vector<torch::Tensor>& value_pieces, int64_t query_start);

  // attend() with keys and values projected from `memory` [B, Lk, hidden].
  AttentionResult forward(const torch::Tensor& query_input, const torch::Tensor& memory,
                          int64_t query_start);

  int64_t heads() const { return heads_; }
  int64_t head_size() const { return head_size_; }

 private:
  int64_t heads_;
  int64_t head_size_;
  QuantizableLinear query_;
  QuantizableLinear key_;
  QuantizableLinear value_;
  QuantizableLinear output_;
  Dropout dropout_;
};
TORCH_MODULE(InterpretableMultiHeadAttention);

}  // namespace tft
