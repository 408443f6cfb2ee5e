// The whole TFT: output shapes over several schemas, causality, interpretation outputs,
// bitwise gradient parity between checkpointing arrangements, and that it can learn.
#include "checkpoint/checkpoint_config.h"
#include "common/error.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "model_test_support.h"

#include <torch/autograd.h>
#include <torch/optim/adam.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::CheckpointConfig;
using tft::InputSchema;
using tft::ModelConfig;
using tft::TFTBatch;
using tft::TFTModel;
using tft::TFTOutput;
using namespace tft::testing;

namespace {

double max_abs(const torch::Tensor& t) { return t.numel() ? t.abs().max().item<double>() : 0.0; }

void expect_shape(const torch::Tensor& t, std::vector<int64_t> expected, const char* what) {
  if (!t.defined() || t.sizes() != torch::IntArrayRef(expected)) {
    std::ostringstream got;
    if (t.defined())
      got << t.sizes();
    else
      got << "undefined";
    fail_msg("%s: shape %s, expected %s", what, got.str().c_str(),
             c10::str(torch::IntArrayRef(expected)).c_str());
  }
}

// Selection weights and attention rows are distributions; masked attention is exactly 0.
void expect_valid_interpretation(const TFTOutput& out, const ModelConfig& c) {
  for (const auto* w : {&out.static_weights, &out.encoder_weights, &out.decoder_weights}) {
    assert_false(w->requires_grad());
    if (w->size(-1) > 0) {
      assert_true(max_abs(w->sum(-1) - 1) < 1e-5);
      assert_true(w->min().item<double>() >= 0);
    }
  }
  assert_false(out.attention.requires_grad());
  assert_true(max_abs(out.attention.sum(-1) - 1) < 1e-5);
  for (int64_t t = 0; t < c.prediction_length; ++t) {
    const int64_t position = c.encoder_length + t;
    const auto row = out.attention.select(1, t);
    if (position + 1 < row.size(-1)) assert_true(max_abs(row.slice(-1, position + 1)) == 0);
  }
}

}  // namespace

TFT_TEST(output_shapes_for_several_schemas) {
  struct Case {
    const char* name;
    InputSchema schema;
    int64_t lstm_layers, decoder_layers;
  };
  std::vector<Case> cases;
  cases.push_back({"everything", full_schema(), 1, 1});
  {
    auto s = full_schema();
    s.static_reals.clear();
    s.static_categoricals.clear();
    cases.push_back({"no static inputs", s, 1, 1});
  }
  {
    auto s = full_schema();
    s.known_reals.clear();
    s.known_categoricals.clear();
    cases.push_back({"no known inputs", s, 2, 1});
  }
  {
    auto s = full_schema();
    s.unknown_reals.clear();
    s.unknown_categoricals.clear();
    s.static_reals.clear();
    cases.push_back({"no unknown inputs, static categoricals only", s, 1, 2});
  }
  {
    InputSchema s;
    s.target = "y";
    cases.push_back({"target only", s, 2, 2});
  }
  {
    InputSchema s;
    s.target = "y";
    s.known_categoricals = {{"weekday", 7, 0}, {"month", 12, 16}};
    s.static_reals = {"size"};
    cases.push_back({"categorical known inputs, one static real", s, 1, 1});
  }
  for (auto& k : cases) {
    auto c = small_config(k.schema, 10, 4);
    c.lstm_layers = k.lstm_layers;
    c.decoder_layers = k.decoder_layers;
    torch::manual_seed(1);
    TFTModel model(c);
    const int64_t b = 3;
    auto out = model->forward(random_batch(c, b));
    const auto n_static = static_cast<int64_t>(c.schema.static_variables().size());
    const auto n_hist = static_cast<int64_t>(c.schema.historical_variables().size());
    const auto n_fut = static_cast<int64_t>(c.schema.future_variables().size());
    std::printf("  %-45s static %lld, historical %lld, future %lld variables\n", k.name,
                static_cast<long long>(n_static), static_cast<long long>(n_hist),
                static_cast<long long>(n_fut));
    expect_shape(out.prediction, {b, 4, 3}, "prediction");
    expect_shape(out.static_weights, {b, n_static}, "static_weights");
    expect_shape(out.encoder_weights, {b, 10, n_hist}, "encoder_weights");
    expect_shape(out.decoder_weights, {b, 4, n_fut}, "decoder_weights");
    expect_shape(out.attention, {b, 4, 14}, "attention");
    assert_true(out.prediction.requires_grad());
    assert_true(torch::isfinite(out.prediction).all().item<bool>());
    expect_valid_interpretation(out, c);
  }
}

TFT_TEST(units_are_listed_in_forward_order) {
  auto c = small_config(full_schema());
  c.decoder_layers = 2;
  TFTModel model(c);
  const auto units = model->units();
  const std::vector<std::string> names{"static_encoder", "historical_encoder", "future_encoder",
                                       "lstm_encoder",   "lstm_decoder",       "attention_0",
                                       "attention_1"};
  assert_int_equal(units.size(), names.size());
  for (size_t i = 0; i < units.size(); ++i) {
    assert_int_equal(units[i].index, i);
    assert_string_equal(units[i].name.c_str(), names[i].c_str());
  }
}

TFT_TEST(bad_batches_are_data_errors) {
  auto c = small_config(full_schema());
  TFTModel model(c);
  auto good = random_batch(c, 2);
  auto b = clone_batch(good);
  b.decoder_reals = torch::randn({2, 4, 2});
  TFT_ASSERT_THROWS_WITH(model->forward(b), tft::DataError,
                         "batch.decoder_reals: expected shape [2, 5, 2], got [2, 4, 2]");
  b = clone_batch(good);
  b.encoder_categoricals.select(-1, 1).fill_(7);  // 'weekday' has 7 values
  TFT_ASSERT_THROWS_WITH(model->forward(b), tft::DataError,
                         "variable 'weekday' (column 1) has code 7 outside [0, 7)");
  b = clone_batch(good);
  b.static_categoricals = b.static_categoricals.to(torch::kInt);
  TFT_ASSERT_THROWS_WITH(model->forward(b), tft::DataError, "must be int64");
  b = clone_batch(good);
  b.static_reals = torch::Tensor();
  TFT_ASSERT_THROWS_WITH(model->forward(b), tft::DataError, "batch.static_reals: missing");
  c.hidden_size = 30;
  TFT_ASSERT_THROWS_WITH(TFTModel(c), tft::ConfigError, "not divisible");
}

TFT_TEST(forecasts_never_depend_on_later_inputs) {
  auto c = small_config(full_schema(), 8, 6);
  c.decoder_layers = 2;  // the first block attends over every step: causal there too
  torch::manual_seed(2);
  TFTModel model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto batch = random_batch(c, 3);
  const auto base = model->forward(batch).prediction;

  for (int64_t t = 0; t < c.prediction_length; ++t) {
    // Known reals at decoder step t, then known categoricals at step t.
    for (int which = 0; which < 2; ++which) {
      auto changed = clone_batch(batch);
      if (which == 0) {
        changed.decoder_reals.select(1, t).add_(1.5);
      } else {
        auto codes = changed.decoder_categoricals.select(1, t);
        codes.copy_((codes + 1) % 7);
      }
      const auto pred = model->forward(changed).prediction;
      if (t > 0) {
        // Bit for bit: masked keys get weight exactly 0 and chunks never see later steps.
        assert_true(torch::equal(pred.slice(1, 0, t), base.slice(1, 0, t)));
      }
      assert_true(max_abs(pred.select(1, t) - base.select(1, t)) > 0);
    }
  }
  // Encoder inputs at any step come before every forecast: they may change all of them (and
  // through the LSTM and attention they do).
  auto changed = clone_batch(batch);
  changed.encoder_reals.select(1, 3).add_(1.5);
  const auto pred = model->forward(changed).prediction;
  assert_true(max_abs(pred.select(1, 0) - base.select(1, 0)) > 0);
  assert_true(max_abs(pred.select(1, c.prediction_length - 1) -
                      base.select(1, c.prediction_length - 1)) > 0);
}

TFT_TEST(interpretation_outputs_are_distributions_when_checkpointed) {
  auto c = small_config(full_schema());
  torch::manual_seed(4);
  TFTModel model(c);
  model->train();
  model->set_checkpointing(CheckpointConfig::uniform(1));
  const auto out = model->forward(random_batch(c, 3));
  expect_valid_interpretation(out, c);
  out.prediction.sum().backward();  // the checkpointed graph differentiates
}

namespace {

double tensor_diff(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.defined() != b.defined()) return std::numeric_limits<double>::infinity();
  if (!a.defined() || a.numel() == 0) return 0.0;
  // torch::equal first: a diff of 0 alone would accept -0 vs +0 or equal NaN patterns.
  return torch::equal(a, b) ? 0.0 : std::max(1e-300, max_abs(a - b));
}

}  // namespace

namespace {

// Every strategy, sub-layer switch and chunk limit against `none`, at one precision: the
// loss, every gradient and every interpretation output bit for bit. Returns `none`'s step.
// The parity tests' model (two LSTM layers, two attention blocks, batch chunks) at
// `precision`, its loss and its batch: the same weights and data at every precision.
struct ParitySetup {
  tft::ModelConfig config = small_config(full_schema(), 12, 5);
  TFTModel model{nullptr};
  tft::QuantileLoss loss_fn{nullptr};
  TFTBatch batch;
  torch::Tensor target;

  explicit ParitySetup(tft::Precision precision, double embedding_dropout = 0.0,
                       double dropout = 0.1) {
    config.dropout = dropout;
    config.embedding_dropout = embedding_dropout;
    config.decoder_layers = 2;
    config.lstm_layers = 2;
    config.unit_chunks["static_encoder"] = 2;  // batch chunks
    torch::manual_seed(5);
    model = TFTModel(config);
    model->train();
    model->set_precision(precision);
    loss_fn = tft::QuantileLoss(config.quantiles);
    batch = random_batch(config, 4);
    target = torch::randn({4, config.prediction_length});
  }

  StepResult step(const CheckpointConfig& checkpointing, const tft::ChunkLimits& limits = {}) {
    return training_step(model, loss_fn, batch, target, checkpointing, limits);
  }
};

// The bound within which a strategy's gradients (the norm of the error over every parameter,
// relative to the norm of the gradient, as tft-bench reports it) and loss match strategy none's
// when units that recompute nothing run whole (the default), without dropout: the same sums in
// another order (docs/config.md, checkpoint.chunk_every_unit, gives the measured figures). With
// dropout the partitions draw different masks (a chunk draws its own), so there is no such bound.
double whole_unit_bound(tft::Precision precision) {
  return precision == tft::Precision::Float32 ? 1e-5 : 2e-2;
}

// With `same_partition` (checkpoint.chunk_every_unit on, for every setting and the reference)
// every strategy must match none bit for bit; without (and without dropout), within
// whole_unit_bound.
StepResult check_gradient_parity(tft::Precision precision, bool same_partition,
                                 double embedding_dropout = 0.0) {
  ParitySetup setup(precision, embedding_dropout, same_partition ? 0.1 : 0.0);
  if (!same_partition) {
    // Targets above every prediction keep the pinball loss linear: a forward differing in its
    // last bits cannot flip a residual's sign (a whole quantile step of gradient).
    setup.target = setup.target + 100.0;
  }
  CheckpointConfig none = CheckpointConfig::none();
  none.chunk_every_unit = same_partition;
  const auto reference = setup.step(none);
  size_t defined = 0;
  for (const auto& g : reference.grads) defined += g.defined() && max_abs(g) > 0;
  std::printf("  %s: %zu of %zu parameter gradients non-zero; loss %.9f\n",
              tft::to_string(precision), defined, reference.grads.size(),
              reference.loss.item<double>());
  assert_true(defined == reference.grads.size());
  // Whatever the precision, what leaves the model is float32, and so are the gradients.
  assert_true(reference.output.prediction.scalar_type() == at::kFloat);
  assert_true(reference.output.attention.scalar_type() == at::kFloat);
  assert_true(reference.output.encoder_weights.scalar_type() == at::kFloat);
  for (const auto& g : reference.grads) assert_true(g.scalar_type() == at::kFloat);

  // Dropout really draws: another seed gives another loss.
  if (setup.config.dropout > 0) {
    torch::manual_seed(99);
    auto other =
        setup.loss_fn(setup.model->forward(setup.batch).prediction, setup.target).item<double>();
    assert_true(other != reference.loss.item<double>());
  }

  struct Setting {
    std::string name;
    CheckpointConfig config;
    tft::ChunkLimits limits;
  };
  std::vector<Setting> settings;
  const auto units = setup.model->units();
  for (const auto& u : units) {
    settings.push_back({"unit " + u.name, CheckpointConfig::selective({u.index}), {}});
  }
  settings.push_back({"all units", CheckpointConfig::uniform(1), {}});
  settings.push_back({"uniform(2)", CheckpointConfig::uniform(2), {}});
  settings.push_back({"selective({1,3})", CheckpointConfig::selective({1, 3}), {}});
  settings.push_back({"dynamic(n, 0.5)", CheckpointConfig::dynamic(units.size(), 0.5), {}});
  settings.push_back(
      {"attention only", CheckpointConfig::uniform(1).with_checkpoint_ffn(false), {}});
  settings.push_back(
      {"FFN only", CheckpointConfig::uniform(1).with_checkpoint_attention(false), {}});
  const auto no_sub_layers =
      CheckpointConfig::uniform(1).with_checkpoint_attention(false).with_checkpoint_ffn(false);
  settings.push_back({"no sub-layers", no_sub_layers, {}});
  // Partial checkpointing: the first k chunks of a unit recompute, the rest keep.
  tft::ChunkLimits first_chunk_only;
  for (const auto& u : units) first_chunk_only[u.index] = 1;
  settings.push_back({"first chunk of every unit", CheckpointConfig::uniform(1), first_chunk_only});
  settings.push_back({"partial mix",
                      CheckpointConfig::uniform(1),
                      {{0, 1}, {1, 3}, {2, 2}, {3, 1}, {4, 2}, {5, 1}, {6, 2}}});
  settings.push_back({"no chunk of any unit",
                      CheckpointConfig::uniform(1),
                      {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}}});

  double worst_relative = 0.0;
  for (auto [name, config, limits] : settings) {
    config.chunk_every_unit = same_partition;
    const auto run = setup.step(config, limits);
    const double loss_diff = tensor_diff(reference.loss, run.loss);
    double grad_diff = 0, error_squared = 0, reference_squared = 0;
    for (size_t i = 0; i < run.grads.size(); ++i) {
      grad_diff = std::max(grad_diff, tensor_diff(reference.grads[i], run.grads[i]));
      error_squared += (run.grads[i] - reference.grads[i]).square().sum().item<double>();
      reference_squared += reference.grads[i].square().sum().item<double>();
    }
    const double relative = std::max(loss_diff / std::abs(reference.loss.item<double>()),
                                     std::sqrt(error_squared / reference_squared));
    worst_relative = std::max(worst_relative, relative);
    double interp_diff =
        tensor_diff(reference.output.prediction.detach(), run.output.prediction.detach());
    for (auto member : {&TFTOutput::static_weights, &TFTOutput::encoder_weights,
                        &TFTOutput::decoder_weights, &TFTOutput::attention}) {
      interp_diff =
          std::max(interp_diff, tensor_diff(reference.output.*member, run.output.*member));
    }
    std::printf("  %-28s |dloss| %g  max|dgrad| %g  max|dinterp| %g  relative %g\n", name.c_str(),
                loss_diff, grad_diff, interp_diff, relative);
    if (same_partition) {
      assert_true(loss_diff == 0.0);
      assert_true(grad_diff == 0.0);
      assert_true(interp_diff == 0.0);
    } else {
      assert_true(relative <= whole_unit_bound(precision));
    }
  }
  std::printf("  %s, %s: worst relative error %g\n", tft::to_string(precision),
              same_partition ? "same partition" : "units that recompute nothing whole",
              worst_relative);
  return reference;
}

}  // namespace

TFT_TEST(gradients_are_bitwise_equal_with_and_without_checkpointing) {
  check_gradient_parity(tft::Precision::Float32, /*same_partition=*/true);
}

TFT_TEST(gradients_with_whole_units_stay_within_the_bound) {
  check_gradient_parity(tft::Precision::Float32, /*same_partition=*/false);
  check_gradient_parity(tft::Precision::Bf16Mixed, /*same_partition=*/false);
}

// bf16-mixed: bitwise across strategies too (each rerun casts as its forward did), and really
// in bfloat16: its gradients differ from float32's, by what 8 significant bits explain.
TFT_TEST(bf16_mixed_gradients_are_bitwise_equal_across_strategies) {
  const StepResult bf16 = check_gradient_parity(tft::Precision::Bf16Mixed, true);
  CheckpointConfig same_partition = CheckpointConfig::none();
  same_partition.chunk_every_unit = true;
  const StepResult fp32 = ParitySetup(tft::Precision::Float32).step(same_partition);
  double worst = 0.0, any_diff = 0.0;
  for (size_t i = 0; i < fp32.grads.size(); ++i) {
    const double scale = std::max(max_abs(fp32.grads[i]), 1e-6);
    const double diff = tensor_diff(fp32.grads[i], bf16.grads[i]);
    worst = std::max(worst, diff / scale);
    any_diff = std::max(any_diff, diff);
  }
  const double loss_diff = tensor_diff(fp32.loss, bf16.loss);
  std::printf("  bf16-mixed against 32: |dloss| %g, worst gradient error relative to its max %g\n",
              loss_diff, worst);
  assert_true(any_diff > 0.0);  // the products did run in bfloat16
  assert_true(loss_diff < 0.02 * std::abs(fp32.loss.item<double>()));
  assert_true(worst < 0.25);
}

// Dropout on the categorical embeddings (in every group: static, historical, future) draws its
// masks from the same generators as the model's other dropout, so every recompute draws them
// again: bitwise parity holds with it too.
TFT_TEST(gradients_are_bitwise_equal_with_embedding_dropout) {
  check_gradient_parity(tft::Precision::Float32, /*same_partition=*/true,
                        /*embedding_dropout=*/0.3);
}

TFT_TEST(chunk_counts_and_checkpointed_chunk_limits) {
  auto c = small_config(full_schema(), 12, 5);
  c.decoder_layers = 2;
  c.unit_chunks["static_encoder"] = 3;
  c.unit_chunks["lstm_decoder"] = 9;  // more than the 5 decoder steps: clamped
  c.unit_chunks["attention_1"] = 8;   // the last block: 8 key-only pieces, 5 query chunks
  TFTModel model(c);
  // Units: static, historical, future, lstm encoder, lstm decoder, attention_0, attention_1.
  assert_int_equal(model->chunk_count(0, 4), 3);
  assert_int_equal(model->chunk_count(0, 2), 2);  // two rows: two batch chunks at most
  assert_int_equal(model->chunk_count(1, 4), c.default_unit_chunks("historical_encoder"));
  assert_int_equal(model->chunk_count(4, 4), 5);
  assert_int_equal(model->chunk_count(6, 4), 8);
  TFT_ASSERT_THROWS_WITH(model->chunk_count(7, 4), tft::ConfigError, "unit 7 does not exist");

  model->set_checkpointed_chunks({{1, 2}});
  assert_true(model->checkpointed_chunks() == (tft::ChunkLimits{{1, 2}}));
  TFT_ASSERT_THROWS_WITH(model->set_checkpointed_chunks({{7, 1}}), tft::ConfigError,
                         "unit 7 does not exist");
  TFT_ASSERT_THROWS_WITH(model->set_checkpointed_chunks({{3, -1}}), tft::ConfigError,
                         "lstm_encoder: -1 is negative");
  // A rejected setting changes nothing; set_checkpointing leaves the limits alone.
  model->set_checkpointing(CheckpointConfig::uniform(1));
  assert_true(model->checkpointed_chunks() == (tft::ChunkLimits{{1, 2}}));
}

TFT_TEST(a_small_model_overfits_a_tiny_batch) {
  InputSchema s;
  s.static_categoricals = {{"series", 4, 0}};
  s.known_reals = {"time"};
  s.unknown_reals = {"noise"};
  s.target = "y";
  auto c = small_config(s, 8, 4);
  c.dropout = 0.0;
  torch::manual_seed(6);
  TFTModel model(c);
  model->train();
  model->set_checkpointing(CheckpointConfig::uniform(1));  // learning through the recompute
  tft::QuantileLoss loss_fn(c.quantiles);

  // Four series: a sine of its own phase and scale, 8 past and 4 future steps each, twice.
  const int64_t b = 8, steps = 12;
  auto series = torch::arange(b, torch::kLong) % 4;
  auto time = torch::arange(steps, torch::kFloat).unsqueeze(0).expand({b, steps}) / steps;
  auto y = torch::sin(6.0 * time + series.unsqueeze(1).to(torch::kFloat)) *
           (1.0 + 0.5 * series.unsqueeze(1).to(torch::kFloat));
  TFTBatch batch;
  batch.static_categoricals = series.unsqueeze(1);
  batch.encoder_reals = torch::stack({torch::randn({b, 8}), time.slice(1, 0, 8), y.slice(1, 0, 8)},
                                     -1);  // unknown, known, target
  batch.decoder_reals = time.slice(1, 8).unsqueeze(-1).contiguous();
  const auto target = y.slice(1, 8).contiguous();

  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  const auto started = std::chrono::steady_clock::now();
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    optimizer.zero_grad();
    auto loss = loss_fn(model->forward(batch).prediction, target);
    loss.backward();
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("  loss %.5f -> %.5f (%.1f%% lower) in 300 Adam steps, %.1f s\n", first, last,
              100.0 * (1.0 - last / first), seconds);
  assert_true(last <= 0.1 * first);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(output_shapes_for_several_schemas),
      cmocka_unit_test(units_are_listed_in_forward_order),
      cmocka_unit_test(bad_batches_are_data_errors),
      cmocka_unit_test(forecasts_never_depend_on_later_inputs),
      cmocka_unit_test(interpretation_outputs_are_distributions_when_checkpointed),
      cmocka_unit_test(gradients_are_bitwise_equal_with_and_without_checkpointing),
      cmocka_unit_test(gradients_with_whole_units_stay_within_the_bound),
      cmocka_unit_test(bf16_mixed_gradients_are_bitwise_equal_across_strategies),
      cmocka_unit_test(gradients_are_bitwise_equal_with_embedding_dropout),
      cmocka_unit_test(chunk_counts_and_checkpointed_chunk_limits),
      cmocka_unit_test(a_small_model_overfits_a_tiny_batch),
  };
  return cmocka_run_group_tests_name("tft_model", tests, nullptr, nullptr);
}
