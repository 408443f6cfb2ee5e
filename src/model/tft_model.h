// The Temporal Fusion Transformer (Lim et al. 2021): wires the blocks of this folder together
// and runs them as checkpointable units (DESIGN.md, "unit").
//
// Data flow (B batch, T_enc encoder steps, T_dec = prediction_length decoder steps,
// T = T_enc + T_dec, H hidden):
//   static inputs -> embedding -> static covariate encoder -> contexts c_s, c_e, c_h, c_c
//   encoder inputs -> embedding -> variable selection (c_s) -> xi_enc [B, T_enc, H]
//   decoder inputs -> embedding -> variable selection (c_s) -> xi_dec [B, T_dec, H]
//   LSTM encoder from (c_h, c_c) over xi_enc; LSTM decoder from the encoder's final state over
//   xi_dec; phi = LayerNorm(xi + GLU(lstm output)) (one gate shared by both)
//   decoder_layers attention blocks (attention_block.h); the last one only for decoder steps
//   quantile head -> prediction [B, T_dec, n_quantiles]
//
// Without static inputs the static contexts are zero: the layers that would consume them are
// built without a context input (adding a zero context is a no-op) and the LSTM encoder starts
// from zero state. Without known inputs the decoder's selected inputs are zero: the LSTM
// decoder then runs on its state alone.
//
// The attention of the last block uses the decoder steps as queries only (earlier blocks use
// every step, since the next block needs keys and values everywhere), over keys at all T
// positions with a causal mask.
//
// Randomness (initial weights, dropout masks) comes from the generators installed on the
// constructing or running thread (checkpoint/generators.h), else from LibTorch's defaults.
#pragma once

#include "checkpoint/checkpoint_config.h"
#include "model/attention_block.h"
#include "model/gate_add_norm.h"
#include "model/input_embedding.h"
#include "model/model_config.h"
#include "model/quantile_head.h"
#include "model/segment.h"
#include "model/static_covariate_encoder.h"
#include "model/tft_batch.h"
#include "model/variable_selection.h"
#include "nn/dropout.h"
#include "nn/precision.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tft {

// Interpretation tensors are detached; the weights of each step sum to 1 (over no variables,
// for a group without any, they are empty).
struct TFTOutput {
  torch::Tensor prediction;       // [B, T_dec, n_quantiles]
  torch::Tensor static_weights;   // [B, n_static]   InputSchema::static_variables() order
  torch::Tensor encoder_weights;  // [B, T_enc, n_hist]  historical_variables() order
  torch::Tensor decoder_weights;  // [B, T_dec, n_fut]   future_variables() order
  torch::Tensor attention;        // [B, T_dec, T], last block, averaged over heads
};

struct UnitInfo {
  std::size_t index;
  std::string name;
};

// Partial checkpointing, by unit index: a checkpointed unit recomputes only its first
// `limit` chunks and keeps the activations of the rest. A unit not listed recomputes all of
// them. The budget planner uses this to meet a memory budget in steps of one chunk instead of
// one unit.
using ChunkLimits = std::map<std::size_t, std::int64_t>;

class TFTModelImpl : public torch::nn::Module {
 public:
  // Validates the config (ConfigError on a broken rule).
  explicit TFTModelImpl(ModelConfig config);

  // Throws DataError when a tensor's shape or dtype does not match the config, or (for a
  // batch on the CPU) a categorical code is outside [0, cardinality). A batch on a GPU is
  // not read back to check its codes, which would stall the device on every step: check it
  // with check_categorical_codes before moving it there, unless its producer guarantees them.
  TFTOutput forward(const TFTBatch& batch);

  // DataError naming the field, variable and code when a categorical code is outside
  // [0, cardinality). Synchronises with the device the codes are on.
  void check_categorical_codes(const TFTBatch& batch) const;

  // The checkpointable units in forward order (ModelConfig::unit_names()).
  std::vector<UnitInfo> units() const;

  // Unit i recomputes its activations in backward iff config.should_checkpoint(i). Inside a
  // checkpointed attention unit the attention sub-layer is recomputed iff
  // checkpoint_attention, the feed-forward sub-layer iff checkpoint_ffn.
  void set_checkpointing(const CheckpointConfig& config);
  const CheckpointConfig& checkpointing() const { return checkpointing_; }

  // The dtype forward's products run in (model/precision.h): autocast on the inputs' device
  // for Bf16Mixed and Fp16Mixed. Parameters stay float32 and the outputs (predictions,
  // variable-selection and attention weights) come back in float32 whatever the precision.
  // Checkpointed segments rerun under the same autocast state, so gradients stay bitwise equal
  // across strategies at one precision in the same partition (checkpoint.chunk_every_unit).
  void set_precision(Precision precision) { precision_ = precision; }
  Precision precision() const { return precision_; }

  // Limits apply on top of whatever set_checkpointing says and stay until replaced ({}: none).
  // A unit whose limit is 0 recomputes nothing and runs whole. With checkpoint.chunk_every_unit
  // the segments are the same whichever chunks recompute, so gradients stay bitwise equal to
  // the un-checkpointed run in that partition. ConfigError for an unknown unit or a negative limit.
  void set_checkpointed_chunks(ChunkLimits limits);
  const ChunkLimits& checkpointed_chunks() const { return chunk_limits_; }

  // How many chunks (segments along time, or along the batch for static_encoder) unit i runs
  // in for a batch of batch_size rows when any of them recomputes (or with
  // checkpoint.chunk_every_unit): ModelConfig::chunks_for clamped to what there is to split.
  // A unit that recomputes nothing runs whole, in one.
  std::int64_t chunk_count(std::size_t unit, std::int64_t batch_size) const;

  const ModelConfig& config() const { return config_; }

 private:
  // A unit's output over time, as the pieces of its chunks.
  struct Selected {
    checkpoint::TensorVector features;  // [B, span length, H] per span
    std::vector<Span> spans;
    torch::Tensor weights;  // [B, L, n_vars]
  };
  struct Encoded {
    checkpoint::TensorVector output;  // phi [B, span length, H] per span
    torch::Tensor state_h, state_c;   // [lstm_layers, B, H] after the last step
  };

  // Whether chunk `chunk` (0-based, in time order) of the unit recomputes in backward.
  bool checkpointed(std::size_t unit, std::int64_t chunk) const;
  SegmentMode segment_mode_of(std::size_t unit, std::int64_t chunk) const;
  // Whether the unit runs in its configured chunks: checkpoint.chunk_every_unit, or grad mode
  // is on and some of them recompute (its first ones, when any does).
  bool runs_in_chunks(std::size_t unit) const;
  // The chunks the unit runs in now for a batch of batch_size rows: ModelConfig::chunks_for
  // when runs_in_chunks, else 1.
  int64_t chunks(std::size_t unit, int64_t batch_size) const;

  StaticContexts encode_static(const TFTBatch& batch, int64_t batch_size);
  Selected select_inputs(std::size_t unit, InputEmbedding& embedding,
                         VariableSelectionNetwork& selection, const torch::Tensor& reals,
                         const torch::Tensor& categoricals, const torch::Tensor& context,
                         const at::TensorOptions& options, int64_t batch_size, int64_t steps);
  Encoded run_lstm(std::size_t unit, torch::nn::LSTM& lstm, const Selected& inputs,
                   torch::Tensor state_h, torch::Tensor state_c);

  ModelConfig config_;
  CheckpointConfig checkpointing_;
  Precision precision_ = Precision::Float32;
  ChunkLimits chunk_limits_;
  std::vector<std::string> unit_names_;
  int64_t num_static_ = 0, num_historical_ = 0, num_future_ = 0;

  InputEmbedding static_embedding_{nullptr};
  StaticCovariateEncoder static_encoder_{nullptr};
  InputEmbedding historical_embedding_{nullptr};
  VariableSelectionNetwork historical_selection_{nullptr};
  InputEmbedding future_embedding_{nullptr};
  VariableSelectionNetwork future_selection_{nullptr};
  torch::nn::LSTM lstm_encoder_{nullptr};
  torch::nn::LSTM lstm_decoder_{nullptr};
  // The post-LSTM gated skip connection, shared by encoder and decoder steps as in the paper
  // (one time-distributed layer over the whole sequence).
  // Between stacked LSTM layers (model.lstm_layers > 1); see run_lstm.
  Dropout lstm_dropout_{nullptr};
  GateAddNorm post_lstm_gate_{nullptr};
  std::vector<AttentionBlock> attention_blocks_;
  QuantileHead quantile_head_{nullptr};
};
TORCH_MODULE(TFTModel);

}  // namespace tft
