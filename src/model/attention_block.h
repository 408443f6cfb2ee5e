// One layer of the temporal fusion decoder above the LSTMs (TFT paper, section 4.5): the unit
// attention_k. In order:
//   theta = GRN(x, c_e)                        static enrichment           (time-distributed)
//   beta  = InterpretableMultiHead(theta)      temporal self-attention     (attention sub-layer)
//   delta = LayerNorm(theta + GLU(beta))       gate/add/norm               (time-distributed)
//   psi   = GRN(delta)                         position-wise feed-forward  (FFN sub-layer)
//   out   = LayerNorm(phi + GLU(psi))          gate/add/norm with the post-LSTM output phi
// Blocks stack: block k+1 takes block k's output as x, and every block's final skip is the
// post-LSTM output phi, as in the paper's single-layer decoder.
//
// Only positions >= query_start produce outputs. Keys and values cover every position, and a
// query at position p sees keys 0..p (causal).
//
// Chunking (segment.h; the model gives a block that recomputes nothing one chunk):
//  * the key-only positions [0, query_start) are split into up to `chunks` pieces, the query
//    positions [query_start, T) into query chunks that keep about as much (query_chunk_count;
//    all `chunks` when there are no key-only positions);
//  * the time-distributed head (enrichment, key and value projections) runs once per piece,
//    key-only pieces and query chunks alike; each returns its keys and values, and a query
//    chunk also its enriched rows (the skip of the first gate/add/norm);
//  * for each query chunk, the attention sub-layer projects the chunk's queries and attends
//    over the key and value pieces up to and including its own: every key its queries may see
//    (later keys would be masked anyway, so they are neither computed against nor kept).
//    Then the gate/add/norm, the FFN and the final gate/add/norm run on the chunk's rows.
//    Each of these four is its own segment, so each can be checkpointed on its own.
#pragma once

#include "model/gate_add_norm.h"
#include "model/grn.h"
#include "model/interpretable_attention.h"
#include "model/segment.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <limits>

namespace tft {

// Which segments of a block recompute in backward, and how many chunks it runs in.
struct AttentionBlockSchedule {
  int64_t chunks = 1;
  bool checkpoint_block = false;      // enrichment, keys/values and both gate/add/norms
  bool checkpoint_attention = false;  // the attention sub-layer
  bool checkpoint_ffn = false;        // the position-wise feed-forward sub-layer
  // The flags above apply to chunks [0, checkpointed_chunks) only (partial checkpointing);
  // key-only piece i and query chunk j are chunks i and j.
  int64_t checkpointed_chunks = std::numeric_limits<int64_t>::max();
  // Segments that do not recompute are kept in their own autograd node (SegmentMode::kKept,
  // checkpoint.chunk_every_unit) instead of running as a plain graph.
  bool same_partition = false;
  bool recomputes(bool flag, size_t chunk) const {
    return flag && static_cast<int64_t>(chunk) < checkpointed_chunks;
  }
  SegmentMode mode(bool flag, size_t chunk) const {
    return segment_mode(recomputes(flag, chunk), same_partition);
  }
};

// The query chunks of a block whose `key_only_steps` key-only steps are cut into `chunks`
// pieces: `chunks` without key-only steps; else as few as keep a query chunk's saved rows about
// those of a piece (1 to `chunks`). Each query chunk is four segments (attention, two
// gate/add/norms, feed-forward), so one smaller than a piece lowers no peak and costs operator
// calls. Rows per step, estimated from the code: a key-only piece keeps about
// kHiddenRowsPerStep rows of `hidden_size` (the enrichment GRN's, the keys' and values'); a
// query step as many plus kScoreRowsPerQuery rows of heads x T (the scores, their softmax and
// its dropout, over all T steps). So the attention decides on narrow models: the reference
// configuration (hidden 160, 4 heads, 168 + 24 steps) gets one query chunk of 24 steps, the
// host-bound one (hidden 16) keeps four.
inline constexpr double kHiddenRowsPerStep = 10.0;
inline constexpr double kScoreRowsPerQuery = 3.0;
std::int64_t query_chunk_count(std::int64_t key_only_steps, std::int64_t query_steps,
                               std::int64_t chunks, std::int64_t hidden_size, std::int64_t heads);

struct AttentionBlockOutput {
  torch::Tensor output;     // [B, T - query_start, hidden]
  torch::Tensor attention;  // [B, T - query_start, T], detached; undefined unless asked for
};

class AttentionBlockImpl : public torch::nn::Module {
 public:
  // with_context: the enrichment GRN takes the static enrichment context.
  AttentionBlockImpl(int64_t hidden_size, int64_t heads, double dropout, bool with_context);

  // x: [B, T, hidden] block input; temporal: [B, T, hidden] post-LSTM output (final skip);
  // enrichment_context: [B, hidden] or undefined. Requires 0 <= query_start < T.
  AttentionBlockOutput forward(const torch::Tensor& x, const torch::Tensor& temporal,
                               const torch::Tensor& enrichment_context, int64_t query_start,
                               const AttentionBlockSchedule& schedule, bool return_attention);

 private:
  GatedResidualNetwork enrichment_;
  InterpretableMultiHeadAttention attention_;
  GateAddNorm post_attention_;
  GatedResidualNetwork feed_forward_;
  GateAddNorm output_gate_;
  int64_t hidden_size_;
};
TORCH_MODULE(AttentionBlock);

}  // namespace tft
