#include "model/attention_block.h"

#include "model/segment.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/constant_pad_nd.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <algorithm>
#include <utility>

namespace tft {

using checkpoint::TensorVector;

AttentionBlockImpl::AttentionBlockImpl(int64_t hidden_size, int64_t heads, double dropout,
                                       bool with_context)
    : enrichment_(register_module(
          "enrichment", GatedResidualNetwork(hidden_size, hidden_size, hidden_size, dropout,
                                             with_context ? hidden_size : 0))),
      attention_(register_module("attention",
                                 InterpretableMultiHeadAttention(hidden_size, heads, dropout))),
      post_attention_(
          register_module("post_attention", GateAddNorm(hidden_size, hidden_size, dropout))),
      feed_forward_(register_module(
          "feed_forward", GatedResidualNetwork(hidden_size, hidden_size, hidden_size, dropout))),
      output_gate_(register_module("output_gate", GateAddNorm(hidden_size, hidden_size, dropout))),
      hidden_size_(hidden_size) {}

std::int64_t query_chunk_count(std::int64_t key_only_steps, std::int64_t query_steps,
                               std::int64_t chunks, std::int64_t hidden_size, std::int64_t heads) {
  if (key_only_steps <= 0 || query_steps <= 0) return chunks;
  const auto pieces = static_cast<double>(split_span(0, key_only_steps, chunks).size());
  const double hidden_rows = kHiddenRowsPerStep * static_cast<double>(hidden_size);
  const double piece_rows = static_cast<double>(key_only_steps) / pieces * hidden_rows;
  const double query_step_rows =
      hidden_rows + kScoreRowsPerQuery * static_cast<double>(heads) *
                        static_cast<double>(key_only_steps + query_steps);
  const double steps_per_chunk = piece_rows / query_step_rows;
  const auto count =
      static_cast<std::int64_t>(std::llround(static_cast<double>(query_steps) / steps_per_chunk));
  return std::clamp<std::int64_t>(count, 1, std::max<std::int64_t>(1, chunks));
}

AttentionBlockOutput AttentionBlockImpl::forward(
    const torch::Tensor& x, const torch::Tensor& temporal, const torch::Tensor& enrichment_context,
    int64_t query_start, const AttentionBlockSchedule& schedule, bool return_attention) {
  const int64_t steps = x.size(1);
  TORCH_CHECK(query_start >= 0 && query_start < steps, "AttentionBlock: query_start ", query_start,
              " outside [0, ", steps, ")");

  // Time chunks: the key-only steps before query_start, then the query chunks. Every query
  // chunk's visible keys are whole pieces (all key-only pieces, and the query pieces up to its
  // own), passed as they are.
  const std::vector<Span> head_spans = split_span(0, query_start, schedule.chunks);
  const std::vector<Span> query_spans =
      split_span(query_start, steps,
                 query_chunk_count(query_start, steps - query_start, schedule.chunks, hidden_size_,
                                   attention_->heads()));
  std::vector<Span> spans = head_spans;
  spans.insert(spans.end(), query_spans.begin(), query_spans.end());
  const size_t first_query_piece = head_spans.size();
  const TensorVector x_pieces = split_into_spans(x, 1, spans);

  // Time-distributed head over every step: keys and values everywhere, the enriched rows only
  // for the query chunks (their skip connection); the others are not needed afterwards.
  TensorVector key_pieces, value_pieces, enriched_pieces;
  for (size_t i = 0; i < spans.size(); ++i) {
    const bool query_piece = i >= first_query_piece;
    // Segments capture module holders by value: a checkpointed segment outlives this call.
    auto outputs = run_segment(
        [enrichment = enrichment_, attention = attention_,
         query_piece](const TensorVector& in) mutable {
          torch::Tensor theta = enrichment(in[0], in[1]);
          TensorVector out{attention->project_keys(theta), attention->project_values(theta)};
          if (query_piece) out.push_back(theta);
          return out;
        },
        {x_pieces[i], enrichment_context}, {enrichment_.ptr(), attention_.ptr()},
        schedule.mode(schedule.checkpoint_block, query_piece ? i - first_query_piece : i));
    key_pieces.push_back(std::move(outputs[0]));
    value_pieces.push_back(std::move(outputs[1]));
    if (query_piece) enriched_pieces.push_back(std::move(outputs[2]));
  }

  // The final skip: the post-LSTM rows of the query chunks (the head piece goes unused).
  std::vector<Span> skip_spans = query_spans;
  if (query_start > 0) skip_spans.insert(skip_spans.begin(), Span{0, query_start});
  const TensorVector skip_pieces = split_into_spans(temporal, 1, skip_spans);
  const size_t first_skip_piece = query_start > 0 ? 1 : 0;

  TensorVector output_parts, attention_parts;
  for (size_t j = 0; j < query_spans.size(); ++j) {
    const Span span = query_spans[j];
    const torch::Tensor& theta = enriched_pieces[j];
    // Attention sub-layer: this chunk's queries against the keys they may see (pieces up to
    // and including their own), read piece by piece (no concatenated copy of the keys).
    const size_t visible = first_query_piece + j + 1;
    TensorVector inputs{theta};
    inputs.insert(inputs.end(), key_pieces.begin(), key_pieces.begin() + visible);
    inputs.insert(inputs.end(), value_pieces.begin(), value_pieces.begin() + visible);
    auto attended = run_segment(
        [attention = attention_, visible,
         first_position = span.begin](const TensorVector& in) mutable {
          const auto begin = in.begin() + 1;
          const TensorVector keys(begin, begin + static_cast<std::ptrdiff_t>(visible));
          const TensorVector values(begin + static_cast<std::ptrdiff_t>(visible), in.end());
          auto result = attention->attend(in[0], keys, values, first_position);
          return TensorVector{result.output, result.weights};
        },
        inputs, {attention_.ptr()}, schedule.mode(schedule.checkpoint_attention, j));
    if (return_attention) {
      torch::NoGradGuard no_grad;
      // Keys after the chunk's last position were masked for all of its queries: weight 0.
      attention_parts.push_back(
          at::constant_pad_nd(attended[1].detach(), {0, steps - span.end}, 0.0));
    }
    const torch::Tensor beta = attended[0];
    attended.clear();  // drop the chunk's weights unless kept above

    const torch::Tensor delta = run_segment(
        [gate = post_attention_](const TensorVector& in) mutable {
          return TensorVector{gate(in[0], in[1])};
        },
        {beta, theta}, {post_attention_.ptr()}, schedule.mode(schedule.checkpoint_block, j))[0];
    const torch::Tensor psi = run_segment(
        [grn = feed_forward_](const TensorVector& in) mutable { return TensorVector{grn(in[0])}; },
        {delta}, {feed_forward_.ptr()}, schedule.mode(schedule.checkpoint_ffn, j))[0];
    output_parts.push_back(run_segment(
        [gate = output_gate_](const TensorVector& in) mutable {
          return TensorVector{gate(in[0], in[1])};
        },
        {psi, skip_pieces[first_skip_piece + j]}, {output_gate_.ptr()},
        schedule.mode(schedule.checkpoint_block, j))[0]);
  }

  AttentionBlockOutput result;
  result.output = at::cat(output_parts, 1);
  if (return_attention) result.attention = at::cat(attention_parts, 1);
  return result;
}

}  // namespace tft
