#include "model/interpretable_attention.h"

#include <ATen/Dispatch.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <limits>

#include "nn/precision.h"

namespace tft {

double attention_mask_value(c10::ScalarType dtype) {
  double value = 0.0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "attention_mask_value", [&] {
    value = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
  });
  return value;
}

InterpretableMultiHeadAttentionImpl::InterpretableMultiHeadAttentionImpl(int64_t hidden_size,
                                                                         int64_t heads,
                                                                         double dropout)
    : heads_(heads),
      head_size_(hidden_size / heads),
      query_(
          register_module("query", QuantizableLinear(hidden_size, heads * (hidden_size / heads)))),
      key_(register_module("key", QuantizableLinear(hidden_size, heads * (hidden_size / heads)))),
      value_(register_module("value", QuantizableLinear(hidden_size, hidden_size / heads))),
      output_(register_module("output", QuantizableLinear(hidden_size / heads, hidden_size))),
      dropout_(register_module("dropout", Dropout(dropout))) {
  TORCH_CHECK(heads > 0 && hidden_size % heads == 0, "InterpretableMultiHeadAttention: hidden ",
              hidden_size, " is not divisible by heads ", heads);
}

torch::Tensor InterpretableMultiHeadAttentionImpl::project_keys(const torch::Tensor& x) {
  return key_(x);
}

torch::Tensor InterpretableMultiHeadAttentionImpl::project_values(const torch::Tensor& x) {
  return value_(x);
}

AttentionResult InterpretableMultiHeadAttentionImpl::attend(
    const torch::Tensor& query_input, const std::vector<torch::Tensor>& key_pieces,
    const std::vector<torch::Tensor>& value_pieces, int64_t query_start) {
  TORCH_CHECK(!key_pieces.empty() && key_pieces.size() == value_pieces.size(),
              "InterpretableMultiHeadAttention: ", key_pieces.size(), " key pieces and ",
              value_pieces.size(), " value pieces");
  const int64_t batch = query_input.size(0), query_len = query_input.size(1);
  int64_t key_len = 0;
  for (const auto& keys : key_pieces) key_len += keys.size(1);
  TORCH_CHECK(query_start >= 0 && query_start < key_len,
              "InterpretableMultiHeadAttention: query_start ", query_start,
              " leaves the first query without a visible key (", key_len, " keys)");

  // Scores as keys x block-diagonal queries: each head's queries [d, Lq] sit on the diagonal
  // of a [h*d, h*Lq] matrix, so one product of a key piece as it is stored, [B, Lk_i, h*d],
  // gives every head's scores, [B, Lk_i, h*Lq]. Splitting the keys into heads instead needs a
  // permuted copy of them, and keeps it, and its gradient, until backward. The zeros cost h
  // times the flops of a product that is small next to the rest of the block. Scaling the
  // queries rather than the scores touches Lq*d numbers instead of Lq*Lk.
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size_));
  const torch::Tensor q = (query_(query_input) * scale)
                              .view({batch, query_len, heads_, head_size_})
                              .permute({0, 2, 3, 1});  // [B, h, d, Lq]
  // Written into the diagonal blocks of zeros: [B, h, d, h, Lq], block (i, i) = head i.
  torch::Tensor block_queries =
      at::zeros({batch, heads_, head_size_, heads_, query_len}, q.options());
  block_queries.diagonal(0, 1, 3).copy_(q.permute({0, 2, 3, 1}));  // [B, d, Lq, h]
  block_queries = block_queries.view({batch, heads_ * head_size_, heads_ * query_len});
  std::vector<torch::Tensor> score_pieces;
  score_pieces.reserve(key_pieces.size());
  for (const auto& keys : key_pieces) score_pieces.push_back(at::bmm(keys, block_queries));
  torch::Tensor scores = at::cat(score_pieces, /*dim=*/1)
                             .view({batch, key_len, heads_, query_len})
                             .permute({0, 2, 3, 1});  // [B, h, Lq, Lk]

  // Causal mask over absolute positions; masked_fill (not an added -inf/-1e9 bias) keeps the
  // unmasked scores bit-exact.
  const auto index_options = scores.options().dtype(at::kLong);
  const torch::Tensor key_pos = at::arange(key_len, index_options);
  const torch::Tensor query_pos =
      at::arange(query_start, query_start + query_len, index_options).unsqueeze(1);
  const torch::Tensor masked = key_pos.unsqueeze(0) > query_pos;  // [Lq, Lk]
  scores = scores.masked_fill(masked, attention_mask_value(scores.scalar_type()));
  const torch::Tensor weights =
      softmax_in_float(scores, /*dim=*/-1).mean(/*dim=*/1);  // [B, Lq, Lk]

  // All heads read the same values, so the head average of the heads' outputs is the
  // head-averaged weights times the values: [B, Lq, Lk_i] x [B, Lk_i, d], summed over pieces
  // (one product each, accumulated in place of a separate sum).
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < value_pieces.size(); ++i) {
    TORCH_CHECK(value_pieces[i].size(1) == key_pieces[i].size(1),
                "InterpretableMultiHeadAttention: value piece ", i, " has ",
                value_pieces[i].size(1), " positions, its key piece ", key_pieces[i].size(1));
    lengths.push_back(value_pieces[i].size(1));
  }
  const std::vector<torch::Tensor> weight_pieces = weights.split_with_sizes(lengths, -1);
  torch::Tensor heads_mean = at::bmm(weight_pieces[0], value_pieces[0]);
  for (size_t i = 1; i < value_pieces.size(); ++i) {
    heads_mean = at::baddbmm(heads_mean, weight_pieces[i], value_pieces[i]);
  }
  torch::Tensor output = dropout_(output_(heads_mean));
  return {output, weights};
}

AttentionResult InterpretableMultiHeadAttentionImpl::forward(const torch::Tensor& query_input,
                                                             const torch::Tensor& memory,
                                                             int64_t query_start) {
  return attend(query_input, {project_keys(memory)}, {project_values(memory)}, query_start);
}

}  // namespace tft
