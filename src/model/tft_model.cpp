#include "model/tft_model.h"

#include "checkpoint/generators.h"
#include "checkpoint/recompute.h"
#include "common/error.h"
#include "model/initialization.h"
#include "model/quantizable_linear.h"
#include "model/segment.h"
#include "model/unit_observer.h"
#include "model/weight_casts.h"

#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/lstm.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

namespace tft {

using checkpoint::TensorVector;

namespace {

// One LSTM pass over `input` from the state (h, c), each [layers, B, H]: LibTorch's LSTM in one
// call, or, for stacked layers with dropout in training, layer by layer with `between` applied
// to each layer's output before the next (what LibTorch's own inter-layer dropout does, drawing
// from the thread's generators instead of LibTorch's shared default one).
TensorVector lstm_forward(torch::nn::LSTM& lstm, Dropout& between, const at::Tensor& input,
                          const at::Tensor& h, const at::Tensor& c) {
  const std::int64_t layers = lstm->options.num_layers();
  // LibTorch's LSTM function over the weights as the pass's casts have them (weight_casts.h).
  std::vector<at::Tensor> weights;
  for (const at::Tensor& weight : lstm->all_weights()) weights.push_back(product_operand(weight));
  if (layers == 1 || !between->is_training() || between->p() == 0.0) {
    auto [output, h_n, c_n] =
        at::lstm(input, {h, c}, weights, lstm->options.bias(), layers, /*dropout=*/0.0,
                 lstm->is_training(), /*bidirectional=*/false, lstm->options.batch_first());
    return {output, h_n, c_n};
  }
  const std::int64_t per_layer = static_cast<std::int64_t>(weights.size()) / layers;
  at::Tensor x = input;
  std::vector<at::Tensor> hs, cs;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    if (layer > 0) x = between(x);
    const auto first = weights.begin() + layer * per_layer;
    const std::vector<at::Tensor> params(first, first + per_layer);
    auto [output, h_layer, c_layer] =
        at::lstm(x, {h.slice(0, layer, layer + 1), c.slice(0, layer, layer + 1)}, params,
                 lstm->options.bias(), /*num_layers=*/1, /*dropout=*/0.0, lstm->is_training(),
                 /*bidirectional=*/false, lstm->options.batch_first());
    x = std::move(output);
    hs.push_back(std::move(h_layer));
    cs.push_back(std::move(c_layer));
  }
  return {x, at::cat(hs), at::cat(cs)};
}

constexpr std::size_t kStaticUnit = 0, kHistoricalUnit = 1, kFutureUnit = 2, kLstmEncoderUnit = 3,
                      kLstmDecoderUnit = 4, kFirstAttentionUnit = 5;

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

// Checks one tensor of a batch against its expected shape; returns it, or an undefined tensor
// when the group has no variables (so blocks never see empty inputs).
torch::Tensor checked(const char* field, const torch::Tensor& t, std::vector<int64_t> expected,
                      bool categorical, at::ScalarType real_dtype) {
  const int64_t columns = expected.back();
  if (columns == 0) {
    if (t.defined() && t.numel() != 0 && t.size(-1) != 0) {
      throw DataError(std::string("batch.") + field + ": the schema has no such variables, got " +
                      shape_of(t));
    }
    return {};
  }
  std::ostringstream want;
  want << c10::IntArrayRef(expected);
  if (!t.defined()) {
    throw DataError(std::string("batch.") + field + ": missing, expected " + want.str());
  }
  if (t.sizes() != c10::IntArrayRef(expected)) {
    throw DataError(std::string("batch.") + field + ": expected shape " + want.str() + ", got " +
                    shape_of(t));
  }
  if (categorical && t.scalar_type() != at::kLong) {
    throw DataError(std::string("batch.") + field + ": categorical codes must be int64, got " +
                    c10::toString(t.scalar_type()));
  }
  if (!categorical && t.scalar_type() != real_dtype) {
    throw DataError(std::string("batch.") + field + ": dtype " + c10::toString(t.scalar_type()) +
                    " does not match the model's " + c10::toString(real_dtype));
  }
  return t;
}

// Codes outside [0, cardinality) would index past an embedding table. A tensor whose columns
// do not match the variables is left to the shape checks.
void check_codes(const char* field, const torch::Tensor& codes,
                 const std::vector<CategoricalVariable>& variables) {
  if (!codes.defined() || codes.numel() == 0 || codes.dim() < 1 ||
      codes.size(-1) != static_cast<int64_t>(variables.size())) {
    return;
  }
  torch::NoGradGuard no_grad;
  const auto flat = codes.reshape({-1, codes.size(-1)});
  const auto low = at::amin(flat, {0}).cpu(), high = at::amax(flat, {0}).cpu();
  const auto lo = low.accessor<int64_t, 1>(), hi = high.accessor<int64_t, 1>();
  for (size_t j = 0; j < variables.size(); ++j) {
    const auto column = static_cast<int64_t>(j);
    const int64_t bad = lo[column] < 0 ? lo[column] : hi[column];
    if (bad < 0 || bad >= variables[j].cardinality) {
      throw DataError(std::string("batch.") + field + ": variable '" + variables[j].name +
                      "' (column " + std::to_string(j) + ") has code " + std::to_string(bad) +
                      " outside [0, " + std::to_string(variables[j].cardinality) + ")");
    }
  }
}

torch::Tensor slice_or_undefined(const torch::Tensor& t, int64_t dim, const Span& span) {
  return t.defined() ? t.slice(dim, span.begin, span.end) : torch::Tensor();
}

}  // namespace

TFTModelImpl::TFTModelImpl(ModelConfig config) : config_(std::move(config)) {
  config_.validate();
  unit_names_ = config_.unit_names();
  const auto& schema = config_.schema;
  const int64_t hidden = config_.hidden_size;
  const double dropout = config_.dropout;
  const double embedding_dropout = config_.embedding_dropout;
  num_static_ = static_cast<int64_t>(schema.static_variables().size());
  num_historical_ = static_cast<int64_t>(schema.historical_variables().size());
  num_future_ = static_cast<int64_t>(schema.future_variables().size());
  const bool has_static = num_static_ > 0;

  if (has_static) {
    static_embedding_ = register_module(
        "static_embedding", InputEmbedding(static_cast<int64_t>(schema.static_reals.size()),
                                           schema.static_categoricals, hidden, embedding_dropout));
    static_encoder_ =
        register_module("static_encoder", StaticCovariateEncoder(num_static_, hidden, dropout));
  }
  historical_embedding_ =
      register_module("historical_embedding",
                      InputEmbedding(static_cast<int64_t>(schema.historical_reals().size()),
                                     schema.historical_categoricals(), hidden, embedding_dropout));
  historical_selection_ =
      register_module("historical_selection",
                      VariableSelectionNetwork(num_historical_, hidden, dropout, has_static));
  if (num_future_ > 0) {
    future_embedding_ = register_module(
        "future_embedding", InputEmbedding(static_cast<int64_t>(schema.known_reals.size()),
                                           schema.known_categoricals, hidden, embedding_dropout));
    future_selection_ = register_module(
        "future_selection", VariableSelectionNetwork(num_future_, hidden, dropout, has_static));
  }
  // No dropout inside LibTorch's LSTM: it would draw from LibTorch's shared default generator.
  // Stacked layers get this model's Dropout between them instead (run_lstm).
  const auto lstm_options =
      torch::nn::LSTMOptions(hidden, hidden).num_layers(config_.lstm_layers).batch_first(true);
  lstm_encoder_ = register_module("lstm_encoder", torch::nn::LSTM(lstm_options));
  lstm_decoder_ = register_module("lstm_decoder", torch::nn::LSTM(lstm_options));
  lstm_dropout_ = register_module("lstm_dropout", Dropout(config_.lstm_layers > 1 ? dropout : 0.0));
  post_lstm_gate_ = register_module("post_lstm_gate", GateAddNorm(hidden, hidden, dropout));
  for (int64_t k = 0; k < config_.decoder_layers; ++k) {
    attention_blocks_.push_back(
        register_module("attention_" + std::to_string(k),
                        AttentionBlock(hidden, config_.attention_heads, dropout, has_static)));
  }
  quantile_head_ = register_module(
      "quantile_head", QuantileHead(hidden, static_cast<int64_t>(config_.quantiles.size())));
  // The initial weights come from this thread's generators (a trainer's own), not from the
  // LibTorch default generator the constructors above drew from.
  initialize_parameters(*this, checkpoint::generator_for(c10::Device(c10::DeviceType::CPU)));
  if (config_.output_init == OutputInit::Center) quantile_head_->zero_projection();
  if (config_.quantization.enabled) attach_fake_quantizers(*this, config_.quantization);
}

std::vector<UnitInfo> TFTModelImpl::units() const {
  std::vector<UnitInfo> units;
  for (std::size_t i = 0; i < unit_names_.size(); ++i) units.push_back({i, unit_names_[i]});
  return units;
}

void TFTModelImpl::set_checkpointing(const CheckpointConfig& config) { checkpointing_ = config; }

void TFTModelImpl::set_checkpointed_chunks(ChunkLimits limits) {
  for (const auto& [unit, limit] : limits) {
    if (unit >= unit_names_.size()) {
      throw ConfigError("checkpointed chunks: unit " + std::to_string(unit) + " does not exist (" +
                        std::to_string(unit_names_.size()) + " units)");
    }
    if (limit < 0) {
      throw ConfigError("checkpointed chunks: " + unit_names_[unit] + ": " + std::to_string(limit) +
                        " is negative");
    }
  }
  chunk_limits_ = std::move(limits);
}

bool TFTModelImpl::checkpointed(std::size_t unit, std::int64_t chunk) const {
  if (!checkpointing_.should_checkpoint(unit)) return false;
  const auto limit = chunk_limits_.find(unit);
  return limit == chunk_limits_.end() || chunk < limit->second;
}

SegmentMode TFTModelImpl::segment_mode_of(std::size_t unit, std::int64_t chunk) const {
  return segment_mode(checkpointed(unit, chunk), checkpointing_.chunk_every_unit);
}

bool TFTModelImpl::runs_in_chunks(std::size_t unit) const {
  // Without grad mode nothing recomputes: every unit runs whole, so a forecast does not
  // depend on the strategy it was trained with (a product over other shapes rounds otherwise).
  if (checkpointing_.chunk_every_unit) return true;
  return torch::autograd::GradMode::is_enabled() && checkpointed(unit, 0);
}

int64_t TFTModelImpl::chunks(std::size_t unit, int64_t batch_size) const {
  return runs_in_chunks(unit) ? config_.chunks_for(unit_names_.at(unit), batch_size) : 1;
}

std::int64_t TFTModelImpl::chunk_count(std::size_t unit, std::int64_t batch_size) const {
  if (unit >= unit_names_.size()) {
    throw ConfigError("chunk_count: unit " + std::to_string(unit) + " does not exist");
  }
  const std::int64_t configured = config_.chunks_for(unit_names_[unit], batch_size);
  const auto pieces = [&](std::int64_t length) {
    return std::max<std::int64_t>(
        1, static_cast<std::int64_t>(split_span(0, length, configured).size()));
  };
  if (unit == kStaticUnit) return pieces(batch_size);  // no time axis: the batch's rows
  // The last unit, an attention block, runs key-only pieces beside its query chunks (chunk i is
  // the i-th of each); every other unit cuts its steps (attention_block.h).
  if (unit + 1 < unit_names_.size()) {
    return pieces(config_.chunked_steps(unit_names_[unit]));
  }
  const int64_t encoder_steps = config_.encoder_length;
  return std::max(pieces(encoder_steps),
                  query_chunk_count(encoder_steps, config_.prediction_length, configured,
                                    config_.hidden_size, config_.attention_heads));
}

StaticContexts TFTModelImpl::encode_static(const TFTBatch& batch, int64_t batch_size) {
  StaticContexts contexts;
  const auto options = batch.encoder_reals.options();
  if (num_static_ == 0) {
    contexts.weights = at::empty({batch_size, 0}, options);
    return contexts;
  }
  TensorVector parts[5];
  // No time axis here: the chunks split the batch.
  const std::vector<Span> spans = split_span(0, batch_size, chunks(kStaticUnit, batch_size));
  for (std::size_t chunk = 0; chunk < spans.size(); ++chunk) {
    const Span span = spans[chunk];
    auto outputs = run_segment(
        [embedding = static_embedding_, encoder = static_encoder_](const TensorVector& in) mutable {
          StaticContexts c = encoder(embedding(in[0], in[1]));
          return TensorVector{c.selection, c.enrichment, c.state_h, c.state_c, c.weights};
        },
        {slice_or_undefined(batch.static_reals, 0, span),
         slice_or_undefined(batch.static_categoricals, 0, span)},
        {static_embedding_.ptr(), static_encoder_.ptr()},
        segment_mode_of(kStaticUnit, static_cast<std::int64_t>(chunk)));
    for (size_t i = 0; i < 5; ++i) parts[i].push_back(std::move(outputs[i]));
  }
  contexts.selection = at::cat(parts[0], 0);
  contexts.enrichment = at::cat(parts[1], 0);
  contexts.state_h = at::cat(parts[2], 0);
  contexts.state_c = at::cat(parts[3], 0);
  contexts.weights = at::cat(parts[4], 0);
  return contexts;
}

TFTModelImpl::Selected TFTModelImpl::select_inputs(
    std::size_t unit, InputEmbedding& embedding, VariableSelectionNetwork& selection,
    const torch::Tensor& reals, const torch::Tensor& categoricals, const torch::Tensor& context,
    const at::TensorOptions& options, int64_t batch_size, int64_t steps) {
  Selected selected;
  if (!embedding) {  // no variables in this group: nothing selected, zero features
    selected.features = {at::zeros({batch_size, steps, config_.hidden_size}, options)};
    selected.spans = {{0, steps}};
    selected.weights = at::empty({batch_size, steps, 0}, options);
    return selected;
  }
  selected.spans = split_span(0, steps, chunks(unit, batch_size));
  // Several chunks read the variables' GRN parameters stacked once for all of them
  // (StackedVariableGrns); the segment finds them after its three inputs.
  const TensorVector stacked = selected.spans.size() > 1 && selection->groups_variables()
                                   ? selection->stacked_variable_grns().tensors()
                                   : TensorVector{};
  TensorVector weights;
  for (std::size_t chunk = 0; chunk < selected.spans.size(); ++chunk) {
    const Span span = selected.spans[chunk];
    auto outputs = run_segment(
        [embedding, selection](const TensorVector& in) mutable {
          std::optional<StackedVariableGrns> stacked;
          if (in.size() > 3) stacked = StackedVariableGrns::from(in, 3);
          VariableSelectionOutput s = selection->select(embedding->embed(in[0], in[1]), in[2],
                                                        stacked ? &*stacked : nullptr);
          return TensorVector{s.output, s.weights};
        },
        {slice_or_undefined(reals, 1, span), slice_or_undefined(categoricals, 1, span), context},
        {embedding.ptr(), selection.ptr()}, segment_mode_of(unit, static_cast<std::int64_t>(chunk)),
        stacked);
    selected.features.push_back(std::move(outputs[0]));
    weights.push_back(std::move(outputs[1]));
  }
  selected.weights = at::cat(weights, 1);
  return selected;
}

TFTModelImpl::Encoded TFTModelImpl::run_lstm(std::size_t unit, torch::nn::LSTM& lstm,
                                             const Selected& inputs, torch::Tensor state_h,
                                             torch::Tensor state_c) {
  // The LSTM runs chunk by chunk, each chunk starting from the previous chunk's final (h, c):
  // the same recurrence as one pass over all steps, but a checkpointed chunk keeps only its
  // input piece and its starting state.
  const std::vector<Span> spans =
      split_span(0, inputs.spans.back().end, chunks(unit, inputs.features.front().size(0)));
  const TensorVector pieces = rechunk(inputs.features, inputs.spans, spans, 1);
  Encoded encoded;
  for (std::size_t chunk = 0; chunk < pieces.size(); ++chunk) {
    const at::Tensor& piece = pieces[chunk];
    auto result = run_segment(
        [lstm, between = lstm_dropout_, gate = post_lstm_gate_](const TensorVector& in) mutable {
          // oneDNN's fused LSTM: one kernel per chunk and direction instead of a dozen small
          // operators per time step, with grad on in every training pass (it picks its
          // kernel by grad mode).
          const TensorVector out = with_training_grad_mode(lstm->is_training(), [&] {
            return lstm_forward(lstm, between, in[0], in[1], in[2]);
          });
          // Gated skip over the LSTM, back to its selected inputs.
          return TensorVector{gate(out[0], in[0]), out[1], out[2]};
        },
        {piece, state_h, state_c}, {lstm.ptr(), lstm_dropout_.ptr(), post_lstm_gate_.ptr()},
        segment_mode_of(unit, static_cast<std::int64_t>(chunk)));
    encoded.output.push_back(std::move(result[0]));
    state_h = std::move(result[1]);
    state_c = std::move(result[2]);
  }
  encoded.state_h = state_h;
  encoded.state_c = state_c;
  return encoded;
}

void TFTModelImpl::check_categorical_codes(const TFTBatch& batch) const {
  const auto& schema = config_.schema;
  check_codes("static_categoricals", batch.static_categoricals, schema.static_categoricals);
  check_codes("encoder_categoricals", batch.encoder_categoricals, schema.historical_categoricals());
  check_codes("decoder_categoricals", batch.decoder_categoricals, schema.known_categoricals);
}

TFTOutput TFTModelImpl::forward(const TFTBatch& batch) {
  const auto& schema = config_.schema;
  const int64_t encoder_steps = config_.encoder_length;
  const int64_t decoder_steps = config_.prediction_length;
  const int64_t hidden = config_.hidden_size;
  const auto dtype = quantile_head_->parameters()[0].scalar_type();

  if (!batch.encoder_reals.defined() || batch.encoder_reals.dim() != 3) {
    throw DataError(
        "batch.encoder_reals: expected [B, " + std::to_string(encoder_steps) + ", " +
        std::to_string(schema.historical_reals().size()) + "], got " +
        (batch.encoder_reals.defined() ? shape_of(batch.encoder_reals) : std::string("nothing")));
  }
  const int64_t b = batch.encoder_reals.size(0);
  auto count = [](const auto& v) { return static_cast<int64_t>(v.size()); };
  TFTBatch in;
  in.static_reals =
      checked("static_reals", batch.static_reals, {b, count(schema.static_reals)}, false, dtype);
  in.static_categoricals = checked("static_categoricals", batch.static_categoricals,
                                   {b, count(schema.static_categoricals)}, true, dtype);
  in.encoder_reals = checked("encoder_reals", batch.encoder_reals,
                             {b, encoder_steps, count(schema.historical_reals())}, false, dtype);
  in.encoder_categoricals =
      checked("encoder_categoricals", batch.encoder_categoricals,
              {b, encoder_steps, count(schema.historical_categoricals())}, true, dtype);
  in.decoder_reals = checked("decoder_reals", batch.decoder_reals,
                             {b, decoder_steps, count(schema.known_reals)}, false, dtype);
  in.decoder_categoricals =
      checked("decoder_categoricals", batch.decoder_categoricals,
              {b, decoder_steps, count(schema.known_categoricals)}, true, dtype);
  // Reading codes back from a GPU would stall it on every forward; there the codes are the
  // producer's to check (our datasets encode them in range; check_categorical_codes otherwise).
  if (in.encoder_reals.device().is_cpu()) check_categorical_codes(in);

  // Every segment checkpointed below keeps its inputs in the configured boundary dtype.
  const checkpoint::BoundaryDtypeScope boundary(checkpointing_.boundary_dtype);
  // Mixed precision: autocast from here to the outputs (each segment records this state for
  // its rerun in backward).
  const AutocastScope autocast(precision_, in.encoder_reals.device().type());
  // ... and each weight that a product reads cast once for the whole pass (weight_casts.h).
  std::optional<WeightCastsScope> weight_casts;
  if (const std::optional<at::ScalarType> dtype = autocast_dtype(precision_)) {
    weight_casts.emplace(std::make_shared<WeightCasts>(product_parameters(*this), *dtype));
  }

  // Each unit's work, announced to a UnitObserver when one is installed (unit_observer.h).
  const auto observed = [](std::size_t unit, const auto& run) {
    const ObservedUnit announce(unit);
    return run();
  };
  // Unit 0: static covariate encoder.
  const StaticContexts statics = observed(kStaticUnit, [&] { return encode_static(in, b); });
  // Units 1 and 2: input embedding and variable selection, past and future.
  const Selected history = observed(kHistoricalUnit, [&] {
    return select_inputs(kHistoricalUnit, historical_embedding_, historical_selection_,
                         in.encoder_reals, in.encoder_categoricals, statics.selection,
                         in.encoder_reals.options(), b, encoder_steps);
  });
  const Selected future = observed(kFutureUnit, [&] {
    return select_inputs(kFutureUnit, future_embedding_, future_selection_, in.decoder_reals,
                         in.decoder_categoricals, statics.selection, in.encoder_reals.options(), b,
                         decoder_steps);
  });

  // Units 3 and 4: sequence-to-sequence layer. c_h and c_c start every LSTM layer.
  const int64_t layers = config_.lstm_layers;
  const auto initial_state = [&](const torch::Tensor& context) {
    return context.defined() ? context.unsqueeze(0).repeat({layers, 1, 1})
                             : at::zeros({layers, b, hidden}, in.encoder_reals.options());
  };
  const Encoded encoded = observed(kLstmEncoderUnit, [&] {
    return run_lstm(kLstmEncoderUnit, lstm_encoder_, history, initial_state(statics.state_h),
                    initial_state(statics.state_c));
  });
  const Encoded decoded = observed(kLstmDecoderUnit, [&] {
    return run_lstm(kLstmDecoderUnit, lstm_decoder_, future, encoded.state_h, encoded.state_c);
  });
  TensorVector phi_pieces = encoded.output;
  phi_pieces.insert(phi_pieces.end(), decoded.output.begin(), decoded.output.end());
  const torch::Tensor temporal = at::cat(phi_pieces, 1);  // phi [B, T, H]
  phi_pieces.clear();

  // Units 5...: the attention blocks. Earlier blocks produce every step (the next block's keys
  // and values), the last one only the decoder steps.
  torch::Tensor x = temporal, attention;
  for (size_t k = 0; k < attention_blocks_.size(); ++k) {
    const std::size_t unit = kFirstAttentionUnit + k;
    const bool last = k + 1 == attention_blocks_.size();
    AttentionBlockSchedule schedule;
    schedule.chunks = chunks(unit, x.size(0));
    schedule.checkpoint_block = checkpointing_.should_checkpoint(unit);
    if (const auto limit = chunk_limits_.find(unit); limit != chunk_limits_.end()) {
      schedule.checkpointed_chunks = limit->second;
    }
    schedule.checkpoint_attention =
        schedule.checkpoint_block && checkpointing_.checkpoint_attention;
    schedule.checkpoint_ffn = schedule.checkpoint_block && checkpointing_.checkpoint_ffn;
    schedule.same_partition = checkpointing_.chunk_every_unit;
    auto block = observed(unit, [&] {
      return attention_blocks_[k]->forward(x, temporal, statics.enrichment,
                                           last ? encoder_steps : 0, schedule, last);
    });
    x = std::move(block.output);
    if (last) attention = std::move(block.attention);
  }

  TFTOutput output;
  // In the model's dtype whatever the precision: the loss and the quantile arithmetic after it
  // run in float32 (a no-op in float32 itself).
  output.prediction = quantile_head_(x).to(dtype);
  output.static_weights = statics.weights.detach().to(dtype);
  output.encoder_weights = history.weights.detach().to(dtype);
  output.decoder_weights = future.weights.detach().to(dtype);
  output.attention = attention.defined() ? attention.to(dtype) : attention;
  return output;
}

}  // namespace tft
