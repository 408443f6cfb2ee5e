// Configuration of the Temporal Fusion Transformer (Lim et al. 2021): the input schema and the
// model's hyper-parameters. Plain data with defaults, like every config struct here; nothing
// is guaranteed valid until validate() says so. No LibTorch here, so config-only code (the
// YAML loader, the C API's config calls) can use it without the tensor library.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tft {

// A categorical input: integer codes in [0, cardinality), embedded and projected to the
// model's hidden size.
struct CategoricalVariable {
  std::string name;
  std::int64_t cardinality = 0;
  // 0: automatic, min(hidden_size, round(1.6 * cardinality^0.56)) (the fastai rule that
  // pytorch-forecasting uses). A value equal to hidden_size skips the projection.
  std::int64_t embedding_dim = 0;
};

// Which variables the model sees, by role. Reals are names only (one column each).
//
// The tensors of a batch hold the variables in this fixed order (reals, then categoricals):
//   static:      static_reals                          | static_categoricals
//   historical:  unknown_reals, known_reals, target    | unknown_categoricals, known_categoricals
//   future:      known_reals                           | known_categoricals
// The target is always a historical real (its past values are an input) and must not be
// listed again among the reals.
struct InputSchema {
  std::vector<std::string> static_reals;
  std::vector<CategoricalVariable> static_categoricals;
  std::vector<std::string> known_reals;
  std::vector<CategoricalVariable> known_categoricals;
  std::vector<std::string> unknown_reals;
  std::vector<CategoricalVariable> unknown_categoricals;
  std::string target;

  // Real columns of each group, in batch order.
  std::vector<std::string> historical_reals() const;
  std::vector<CategoricalVariable> historical_categoricals() const;
  // Variable names in the order of the selection weights (reals first, then categoricals).
  std::vector<std::string> static_variables() const;
  std::vector<std::string> historical_variables() const;
  std::vector<std::string> future_variables() const;
};

// Resolved embedding width of a categorical variable (see CategoricalVariable).
std::int64_t embedding_dim_for(const CategoricalVariable& variable, std::int64_t hidden_size);

// Quantization-aware training (docs/config.md, `training.qat`): the model's linear layers
// (GRNs, gates, attention projections, categorical projections, the quantile head) multiply
// fake-quantized weights by fake-quantized inputs, so training sees int8 rounding. The LSTMs,
// embeddings and LayerNorms stay float. See model/fake_quantizer.h for the observers.
struct QuantizationConfig {
  bool enabled = false;
  // Weights: symmetric, per output channel, [-2^(b-1), 2^(b-1) - 1].
  std::int64_t weight_bits = 8;
  // Layer inputs: affine, per tensor, [0, 2^b - 1].
  std::int64_t activation_bits = 8;
};

bool operator==(const QuantizationConfig& a, const QuantizationConfig& b);
bool operator!=(const QuantizationConfig& a, const QuantizationConfig& b);

// How the quantile head's weights start (QuantileHead).
enum class OutputInit {
  Uniform,  // "uniform": LibTorch's Linear rule, as every other linear layer
  Center,   // "center": zero weights and biases, so that an untrained model forecasts the
            // target's centre (the target normaliser's: the last value, the value one season
            // back or the series' mean) for every quantile, and training learns the correction
};
const char* to_string(OutputInit init);

struct ModelConfig {
  std::int64_t hidden_size = 64;
  std::int64_t attention_heads = 4;
  double dropout = 0.1;
  // Dropout on the categorical variables' embeddings (after the projection to hidden_size,
  // before variable selection), in training mode only; the reals' are left alone. 0: off.
  double embedding_dropout = 0.0;
  std::int64_t lstm_layers = 1;
  // Stacked attention blocks (units attention_0 .. attention_{decoder_layers-1}).
  std::int64_t decoder_layers = 1;
  std::vector<double> quantiles{0.1, 0.5, 0.9};
  // Uniform, also for a trainer (ModelSettings::output_init). Tests and benchmarks that compare
  // one step's gradients need it: under Center every gradient but the head's is zero at the
  // first step.
  OutputInit output_init = OutputInit::Uniform;
  std::int64_t encoder_length = 0;
  std::int64_t prediction_length = 0;
  InputSchema schema;
  // Time chunks per unit name (see unit_names()); a unit that is absent gets
  // default_unit_chunks(), fewer for small batches (chunks_for). Each chunk is one checkpoint
  // segment; a count above the unit's number of time steps is clamped to it. static_encoder has no
  // time axis: its chunks split the batch.
  std::map<std::string, std::int64_t> unit_chunks;
  // A chunk costs the same operator calls (kernel launches on a GPU) whatever its size, and
  // saves at most its own activations. Below this size a [rows, steps, hidden] tensor is
  // 32 KiB in float32 and a unit's chunk keeps a few dozen of them, a megabyte or two: less
  // than its hundreds of extra calls are worth (BENCHMARKS.md, Operator calls, the host-bound
  // configuration). The reference configuration's chunks hold 26 times as much. Not a
  // configuration key and not saved: the model tests set 1 so that their small shapes keep
  // the default chunks they exercise.
  std::int64_t min_chunk_elements = kDefaultMinChunkElements;
  static constexpr std::int64_t kDefaultMinChunkElements = 8192;
  // Fake quantizers on the linear layers; disabled: a float model with no quantizer state.
  QuantizationConfig quantization;

  // Throws ConfigError naming the field and the rule, e.g.
  // "model.hidden_size: 30 is not divisible by model.attention_heads 4".
  void validate() const;

  // The checkpointable units in forward order: static_encoder, historical_encoder,
  // future_encoder, lstm_encoder, lstm_decoder, attention_0 .. attention_{decoder_layers-1}.
  std::vector<std::string> unit_names() const;
  // The steps along which `unit` is cut into chunks: encoder_length for historical_encoder and
  // lstm_encoder, prediction_length for future_encoder and lstm_decoder, both for an attention
  // block (its keys and values span every step); 0 for static_encoder, whose chunks split the
  // batch.
  std::int64_t chunked_steps(const std::string& unit) const;
  // Time chunks of `unit` when it runs in chunks, for a batch of batch_size rows:
  // unit_chunks[name] if present, else default_unit_chunks(name), fewer where a chunk would
  // hold fewer than min_chunk_elements (rows x steps x hidden) a tensor.
  std::int64_t chunks_for(const std::string& unit, std::int64_t batch_size) const;
  // Defaults tuned on the reference configuration (hidden 160, encoder 168, horizon 24):
  // see default_unit_chunks() in model_config.cpp for the numbers and why. The decoder's
  // units depend on encoder_length and prediction_length.
  std::int64_t default_unit_chunks(const std::string& unit) const;
};

}  // namespace tft
