// Shared helpers of the model tests: schemas, configs and random batches that match them.
#pragma once

#include "checkpoint/checkpoint_config.h"
#include "model/model_config.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <torch/types.h>

#include <string>
#include <utility>
#include <vector>

namespace tft::testing {

// Every kind of input: static reals and categoricals, known and unknown of both kinds.
inline InputSchema full_schema() {
  InputSchema s;
  s.static_reals = {"size"};
  s.static_categoricals = {{"store", 5, 0}, {"region", 3, 4}};
  s.known_reals = {"price", "day_of_year"};
  s.known_categoricals = {{"weekday", 7, 0}};
  s.unknown_reals = {"visits"};
  s.unknown_categoricals = {{"event", 4, 0}};
  s.target = "sales";
  return s;
}

inline ModelConfig small_config(InputSchema schema, int64_t encoder = 12, int64_t decoder = 5) {
  ModelConfig c;
  c.hidden_size = 16;
  c.attention_heads = 4;
  c.dropout = 0.1;
  c.encoder_length = encoder;
  c.prediction_length = decoder;
  c.schema = std::move(schema);
  c.min_chunk_elements = 1;  // these shapes would run in one chunk; the tests are about chunks
  return c;
}

// The memory tests' shape: big enough for activations to dwarf the allocator's noise.
inline ModelConfig moderate_config() {
  InputSchema s;
  s.static_categoricals = {{"store", 10, 0}, {"region", 20, 0}};
  s.known_reals = {"k0", "k1", "k2"};
  s.unknown_reals = {"u0", "u1", "u2", "u3", "u4"};
  s.target = "y";
  auto c = small_config(s, 48, 12);
  c.hidden_size = 32;
  return c;
}

inline torch::Tensor random_codes(const std::vector<CategoricalVariable>& variables,
                                  std::vector<int64_t> leading) {
  if (variables.empty()) return {};
  std::vector<torch::Tensor> columns;
  for (const auto& v : variables) {
    columns.push_back(at::randint(v.cardinality, leading, at::kLong).unsqueeze(-1));
  }
  return torch::cat(columns, -1);
}

inline torch::Tensor random_reals(size_t count, std::vector<int64_t> leading) {
  if (count == 0) return {};
  leading.push_back(static_cast<int64_t>(count));
  return at::randn(leading);
}

inline TFTBatch random_batch(const ModelConfig& c, int64_t batch) {
  const auto& s = c.schema;
  TFTBatch b;
  b.static_reals = random_reals(s.static_reals.size(), {batch});
  b.static_categoricals = random_codes(s.static_categoricals, {batch});
  b.encoder_reals = random_reals(s.historical_reals().size(), {batch, c.encoder_length});
  b.encoder_categoricals = random_codes(s.historical_categoricals(), {batch, c.encoder_length});
  b.decoder_reals = random_reals(s.known_reals.size(), {batch, c.prediction_length});
  b.decoder_categoricals = random_codes(s.known_categoricals, {batch, c.prediction_length});
  return b;
}

inline TFTBatch clone_batch(const TFTBatch& b) {
  auto copy = [](const torch::Tensor& t) { return t.defined() ? t.clone() : t; };
  return {copy(b.static_reals),         copy(b.static_categoricals), copy(b.encoder_reals),
          copy(b.encoder_categoricals), copy(b.decoder_reals),       copy(b.decoder_categoricals)};
}

// A model (in training mode), its quantile loss and a random batch with targets, all drawn
// after seeding with `seed`.
struct TrainingSetup {
  ModelConfig config;
  TFTModel model{nullptr};
  QuantileLoss loss_fn{nullptr};
  TFTBatch batch;
  torch::Tensor target;

  TrainingSetup(ModelConfig c, int64_t batch_size, uint64_t seed) : config(std::move(c)) {
    torch::manual_seed(seed);
    model = TFTModel(config);
    model->train();
    loss_fn = QuantileLoss(config.quantiles);
    batch = random_batch(config, batch_size);
    target = torch::randn({batch_size, config.prediction_length});
  }
};

struct StepResult {
  torch::Tensor loss;
  std::vector<torch::Tensor> grads;  // in parameters() order; undefined where none flowed
  TFTOutput output;
};

// One forward and backward under `config` (and chunk `limits`), from cleared gradients and
// the same dropout masks every time.
inline StepResult training_step(TFTModel& model, QuantileLoss& loss_fn, const TFTBatch& batch,
                                const torch::Tensor& target, const CheckpointConfig& config,
                                const ChunkLimits& limits = {}) {
  model->set_checkpointing(config);
  model->set_checkpointed_chunks(limits);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  torch::manual_seed(1234);  // the same dropout masks in every run
  StepResult r;
  r.output = model->forward(batch);
  auto loss = loss_fn(r.output.prediction, target);
  loss.backward();
  r.loss = loss.detach();
  for (const auto& p : model->parameters()) {
    r.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  }
  return r;
}

}  // namespace tft::testing
