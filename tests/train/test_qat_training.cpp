// Quantization-aware training end to end (training.qat): with checkpointing it trains bitwise
// like without (losses, weights, observers); the observers start at start_epoch and freeze
// after freeze_observers_epoch; a resumed run ends bitwise like an uninterrupted one; the saved
// model records the quantization and predicts exactly what the trained model predicts.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "nn/fake_quantizer.h"
#include "store/module_state.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::CheckpointConfig;
using tft::TrainConfig;
using tft::Trainer;
using tft::TrainReport;
using namespace tft::testing;

namespace {

TrainConfig qat_config(const fs::path& dir, const std::string& name) {
  TrainConfig c = synthetic_config(dir / "data.csv", dir / name);
  c.training.epochs = 4;
  c.training.qat.enabled = true;
  c.training.qat.start_epoch = 2;
  c.training.qat.freeze_observers_epoch = 3;
  // Observers see every chunk of a chunked unit; this small model's units would run in one
  // chunk each (ModelConfig::min_chunk_elements).
  c.model.unit_chunks = {{"historical_encoder", 4}, {"lstm_encoder", 4}, {"attention_0", 2}};
  return c;
}

// Every fake quantizer's buffers after each epoch.
struct ObservedRun {
  TrainReport report;
  std::vector<std::vector<at::Tensor>> observers;  // per epoch
};

ObservedRun train_observed(Trainer& trainer, bool resume = false) {
  ObservedRun run;
  run.report = trainer.train(
      [&](const tft::TrainProgress& p) {
        if (p.kind == tft::TrainProgress::Kind::Epoch) {
          std::vector<at::Tensor> copies;
          for (const auto& b : tft::fake_quantizer_buffers(*trainer.model())) {
            copies.push_back(b.clone());
          }
          run.observers.push_back(copies);
        }
        return true;
      },
      resume);
  return run;
}

bool tensors_equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!tft::tensors_bitwise_equal(a[i], b[i])) return false;
  }
  return true;
}

bool all_uncalibrated(tft::TFTModel& model) {
  for (const auto& q : tft::fake_quantizers(*model)) {
    if (q->calibrated()) return false;
  }
  return true;
}

}  // namespace

TFT_TEST(test_qat_with_checkpointing_trains_bitwise_like_without) {
  const fs::path dir = scratch_dir("qat_parity");
  write_text(dir / "data.csv", synthetic_csv(80));
  // In the same partition (checkpoint.chunk_every_unit), where strategies are bitwise equal.
  TrainConfig plain = qat_config(dir, "plain");
  plain.checkpoint = CheckpointConfig::none();
  plain.checkpoint.chunk_every_unit = true;
  TrainConfig checkpointed = qat_config(dir, "checkpointed");
  checkpointed.checkpoint = CheckpointConfig::uniform(1);
  checkpointed.checkpoint.chunk_every_unit = true;

  Trainer a(plain);
  assert_true(all_uncalibrated(a.model()));
  assert_false(tft::fake_quantizers(*a.model()).empty());
  const ObservedRun x = train_observed(a);
  Trainer b(checkpointed);
  const ObservedRun y = train_observed(b);

  assert_int_equal(x.report.history.size(), 4);
  for (std::size_t i = 0; i < 4; ++i) {
    std::printf("  epoch %zu: train loss %.9f / %.9f, validation %.9f / %.9f\n", i + 1,
                x.report.history[i].train_loss, y.report.history[i].train_loss,
                x.report.history[i].validation.loss, y.report.history[i].validation.loss);
    assert_true(x.report.history[i].train_loss == y.report.history[i].train_loss);
    assert_true(x.report.history[i].validation.loss == y.report.history[i].validation.loss);
    assert_true(tensors_equal(x.observers[i], y.observers[i]));
  }
  assert_true(same_weights(a.model(), b.model()));
  // dynamic: the planner measures the quantized model (its quantizers calibrated on the first
  // batch) and training still starts from the uncalibrated state: the same run again.
  TrainConfig planned = qat_config(dir, "planned");
  planned.checkpoint = CheckpointConfig::dynamic(6, 0.5);
  planned.checkpoint.chunk_every_unit = true;
  Trainer c(planned);
  assert_true(all_uncalibrated(c.model()) == false);
  const ObservedRun z = train_observed(c);
  for (std::size_t i = 0; i < 4; ++i) {
    assert_true(x.report.history[i].train_loss == z.report.history[i].train_loss);
    assert_true(tensors_equal(x.observers[i], z.observers[i]));
  }
  assert_true(same_weights(a.model(), c.model()));
  // It learns with QAT on.
  assert_true(x.report.best_validation_loss < 0.7 * x.report.initial_validation_loss);

  // Epoch 1 is float: nothing observed yet. Epoch 2 calibrates and moves the observers,
  // epoch 3 moves them, epoch 4 (after freeze_observers_epoch 3) leaves them as they were.
  // "calibrated" is the first quantizer's last buffer.
  const std::size_t calibrated_index =
      tft::fake_quantizers(*a.model()).front()->buffers(/*recurse=*/false).size() - 1;
  assert_true(x.observers[0][calibrated_index].item<std::int64_t>() == 0);
  assert_true(x.observers[1][calibrated_index].item<std::int64_t>() == 1);
  assert_false(tensors_equal(x.observers[1], x.observers[2]));
  assert_true(tensors_equal(x.observers[2], x.observers[3]));
  fs::remove_all(dir);
}

TFT_TEST(test_qat_resume_ends_bitwise_like_an_uninterrupted_run) {
  const fs::path dir = scratch_dir("qat_resume");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig four = qat_config(dir, "straight");
  Trainer straight(four);
  const ObservedRun a = train_observed(straight);

  TrainConfig two = qat_config(dir, "interrupted");
  two.training.epochs = 2;  // stops right after the calibrating epoch
  {
    Trainer first(two);
    first.train();
  }
  TrainConfig again = qat_config(dir, "interrupted");
  Trainer second(again);
  const ObservedRun b = train_observed(second, /*resume=*/true);
  assert_int_equal(b.report.resumed_from_epoch, 2);
  for (std::size_t i = 0; i < 4; ++i) {
    assert_true(a.report.history[i].train_loss == b.report.history[i].train_loss);
  }
  assert_true(tensors_equal(a.observers[3], b.observers[1]));
  assert_true(same_weights(straight.model(), second.model()));
  fs::remove_all(dir);
}

TFT_TEST(test_saved_qat_model_predicts_like_the_trained_model) {
  const fs::path dir = scratch_dir("qat_saved");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig config = qat_config(dir, "out");
  Trainer trainer(config);
  const TrainReport report = trainer.train();
  // The kept model is a quantized one: epoch 1 (float) cannot be the best.
  assert_true(report.best_epoch >= config.training.qat.start_epoch);
  const tft::Predictions mine = trainer.predict();

  const auto summary = nlohmann::json::parse(read_text(dir / "out/summary.json"));
  assert_string_equal(summary.at("quantization_aware_training").get<std::string>().c_str(),
                      "8-bit weights, 8-bit inputs, from epoch 2, observers frozen after epoch 3");
  const auto model_config = nlohmann::json::parse(read_text(dir / "out/model/model_config.json"));
  assert_true(model_config.contains("quantization"));
  assert_int_equal(model_config.at("quantization").at("weight_bits").get<int>(), 8);
  tft::SavedModel saved = tft::SavedModel::load(dir / "out/model");
  assert_true(saved.model()->config().quantization.enabled);
  assert_true(same_weights(saved.model(), trainer.model()));  // the observers included
  for (const auto& q : tft::fake_quantizers(*saved.model())) assert_true(q->calibrated());
  assert_true(forecasts_bitwise_equal(saved.predict(trainer.dataset()), mine));

  // The quantizers matter to those predictions: a float model with the same weights differs.
  TrainConfig float_config = config;
  float_config.training.qat.enabled = false;
  float_config.output.directory = (dir / "float").string();
  Trainer float_trainer(float_config);
  tft::ModuleState weights = tft::copy_module_state(*trainer.model());
  weights.buffers.clear();
  for (const auto& item : float_trainer.model()->named_buffers()) {
    weights.buffers.emplace_back(item.key(), item.value().clone());
  }
  tft::load_module_state(*float_trainer.model(), weights, "QAT weights");
  assert_false(forecasts_bitwise_equal(float_trainer.predict(), mine));
  fs::remove_all(dir);
}

TFT_TEST(test_bad_qat_settings_are_config_errors) {
  const fs::path dir = scratch_dir("qat_bad");
  TrainConfig c = qat_config(dir, "out");
  c.training.qat.weight_bits = 9;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.qat.weight_bits: must be in [2, 8] (got 9)");
  c = qat_config(dir, "out");
  c.training.qat.activation_bits = 1;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.qat.activation_bits: must be in [2, 8] (got 1)");
  c = qat_config(dir, "out");
  c.training.qat.start_epoch = 0;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError, "training.qat.start_epoch");
  c = qat_config(dir, "out");
  c.training.qat.start_epoch = 5;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.qat.start_epoch: 5 is after training.epochs 4");
  c = qat_config(dir, "out");
  c.training.qat.start_epoch = 3;
  c.training.qat.freeze_observers_epoch = 2;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.qat.freeze_observers_epoch: 2 is before "
                         "training.qat.start_epoch 3");
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_qat_with_checkpointing_trains_bitwise_like_without),
      cmocka_unit_test(test_qat_resume_ends_bitwise_like_an_uninterrupted_run),
      cmocka_unit_test(test_saved_qat_model_predicts_like_the_trained_model),
      cmocka_unit_test(test_bad_qat_settings_are_config_errors),
  };
  return cmocka_run_group_tests_name("qat_training", tests, nullptr, nullptr);
}
