#include "model/interpretable_attention.h"

#include <ATen/Dispatch.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <limits>

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
      query_(register_module("query", QuantizableLinear(hidden_size, heads * (hidden_size / heads)))),
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

AttentionResult InterpretableMultiHeadAttentionImpl::attend(const torch::Tensor& query_input,
                                                            const torch::Tensor& keys,
                                                            const torch::Tensor& values,
                                                            int64_t query_start) {
  const int64_t batch = query_input.size(0), query_len = query_input.size(1);
  const int64_t key_len = keys.size(1);
  TORCH_CHECK(query_start >= 0 && query_start < key_len,
              "InterpretableMultiHeadAttention: query_start ", query_start,
              " leaves the first query without a visible key (", key_len, " keys)");
  // Scaling the queries rather than the scores touches Lq*d numbers instead of Lq*Lk.
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size_));
  // [B, Lq, h*d] -> [B, h, Lq, d]; keys -> [B, h, d, Lk]
  const torch::Tensor q =
      (query_(query_input) * scale).view({batch, query_len, heads_, head_size_}).transpose(1, 2);
  const torch::Tensor k = keys.reshape({batch, key_len, heads_, head_size_}).permute({0, 2, 3, 1});
  torch::Tensor scores = at::matmul(q, k);  // [B, h, Lq, Lk]

  // Causal mask over absolute positions; masked_fill (not an added -inf/-1e9 bias) keeps the
  // unmasked scores bit-exact.
  const auto index_options = scores.options().dtype(at::kLong);
  const torch::Tensor key_pos = at::arange(key_len, index_options);
  const torch::Tensor query_pos =
      at::arange(query_start, query_start + query_len, index_options).unsqueeze(1);
  const torch::Tensor masked = key_pos.unsqueeze(0) > query_pos;  // [Lq, Lk]
  scores = scores.masked_fill(masked, attention_mask_value(scores.scalar_type()));
  const torch::Tensor probabilities = at::softmax(scores, /*dim=*/-1);

  // All heads read the same values: [B, h, Lq, Lk] x [B, 1, Lk, d] -> [B, h, Lq, d], then the
  // head average and the output projection.
  const torch::Tensor heads_out = at::matmul(probabilities, values.unsqueeze(1));
  torch::Tensor output = dropout_(output_(heads_out.mean(/*dim=*/1)));
  return {output, probabilities.mean(/*dim=*/1)};
}

AttentionResult InterpretableMultiHeadAttentionImpl::forward(const torch::Tensor& query_input,
                                                             const torch::Tensor& memory,
                                                             int64_t query_start) {
  return attend(query_input, project_keys(memory), project_values(memory), query_start);
}

}  // namespace tft
