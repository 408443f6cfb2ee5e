// The trainer end to end on a small synthetic multi-series problem: it learns (validation loss
// at least halved), writes its files, a saved model predicts bitwise like the in-memory one, a
// resumed run ends bitwise like an uninterrupted one, the NaN/Inf guard keeps the best model,
// cancelling works from the callback and from another thread, early stopping triggers, and
// weight decay, embedding dropout and the warm-up act when on and change nothing when off.
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/adam.h>

#include "common/error.h"
#include "planning/checkpoint_planning.h"
#include "report/forecast.h"
#include "store/module_state.h"
#include "store/saved_model.h"
#include "store/snapshot.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TrainConfig;
using tft::Trainer;
using tft::TrainReport;
using namespace tft::testing;

namespace {

std::size_t count_lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// The weights a snapshot holds after its last epoch.
tft::ModuleState snapshot_weights(const fs::path& path, const TrainConfig& config) {
  Trainer holder(config);  // a model of the right shape, and an optimizer for it
  torch::optim::Adam adam(holder.model()->parameters());
  return tft::load_snapshot(path, holder.model(), adam).model;
}

bool all_finite(const tft::TFTModel& model) {
  for (const auto& p : model->parameters()) {
    if (!torch::isfinite(p).all().item<bool>()) return false;
  }
  return true;
}

}  // namespace

TFT_TEST(test_learns_writes_outputs_and_saved_model_predicts_bitwise) {
  const fs::path dir = scratch_dir("learn");
  write_text(dir / "data.csv", synthetic_csv());
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  Trainer trainer(config);
  const TrainReport report = trainer.train();

  // Learning: the validation loss ends at least 50% below the untrained model's.
  assert_true(std::isfinite(report.initial_validation_loss));
  assert_true(report.best_validation_loss <= 0.5 * report.initial_validation_loss);
  assert_int_equal(report.epochs_run, config.training.epochs);
  assert_int_equal(report.history.size(), config.training.epochs);
  assert_false(report.early_stopped);
  assert_true(report.best_epoch >= 1);
  assert_true(report.validation.windows > 0);
  // The model ends with the best epoch's weights.
  assert_true(std::fabs(report.validation.loss - report.best_validation_loss) < 1e-12);
  assert_true(std::isfinite(report.validation.q_risk_p50));
  assert_true(std::isfinite(report.validation.q_risk_p90));
  assert_true(std::isfinite(report.validation.mae_p50));
  assert_true(report.samples_per_second > 0);
  assert_true(report.peak_activation_bytes > 0);
  assert_true(report.memory.checkpointed_peak_bytes > 0);
  assert_true(report.memory.unchecked_peak_bytes > report.memory.checkpointed_peak_bytes);

  // The files.
  const fs::path out = dir / "out";
  for (const char* name :
       {"metrics.jsonl", "forecast.csv", "forecast.svg", "interpretation.json",
        "interpretation.svg", "summary.json", "snapshots/last.pt", "model/weights.pt",
        "model/config.yaml", "model/transforms.json", "model/model_config.json"}) {
    if (!fs::exists(out / name)) fail_msg("missing output %s", name);
  }
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) {
      fail_msg("temporary left behind: %s", entry.path().c_str());
    }
  }
  const std::string metrics = read_text(out / "metrics.jsonl");
  assert_int_equal(count_lines(metrics), config.training.epochs);
  const auto first_epoch = nlohmann::json::parse(metrics.substr(0, metrics.find('\n')));
  assert_int_equal(first_epoch.at("epoch").get<int>(), 1);
  assert_true(first_epoch.contains("q_risk_p90"));
  const std::string csv = read_text(out / "forecast.csv");
  assert_true(csv.rfind("kind,series,origin,time,horizon,q0.1,q0.5,q0.9,actual\n", 0) == 0);
  // The future windows: one per series, 4 steps each, no actual.
  assert_true(csv.find("\nfuture,a,119,120,1,") != std::string::npos);
  assert_true(csv.find("\nfuture,c,119,123,4,") != std::string::npos);
  assert_true(csv.find("\nvalidation,a,") != std::string::npos);
  assert_true(csv.find(",\n") != std::string::npos);  // a future row's empty actual
  const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
  for (const char* key : {"final_validation_loss", "best_validation_loss", "validation",
                          "epochs_run", "samples_per_second", "memory"}) {
    if (!summary.contains(key)) fail_msg("summary.json lacks %s", key);
  }
  // The baselines on the same windows, and calibration.
  assert_true(summary.at("baselines").at("naive").at("windows").get<int>() ==
              summary.at("validation").at("windows").get<int>());
  assert_int_equal(summary.at("validation").at("coverage").size(), 3);
  assert_true(summary.at("validation").at("interval_coverage").is_number());
  assert_true(first_epoch.at("coverage").size() == 3);
  assert_true(summary.at("memory").contains("predicted_savings"));
  assert_true(summary.at("memory").contains("measured_savings"));
  assert_string_equal(summary.at("memory").at("checkpoint_summary").get<std::string>().c_str(),
                      config.checkpoint.summary().c_str());
  const auto interpretation = nlohmann::json::parse(read_text(out / "interpretation.json"));
  assert_true(interpretation.at("static_importance").contains("series"));
  assert_true(interpretation.at("encoder_importance").contains("lagged"));
  assert_true(interpretation.at("decoder_importance").contains("season_sin"));
  assert_int_equal(interpretation.at("attention").at("mean").size(), 16);
  assert_int_equal(interpretation.at("attention").at("positions").at(0).get<int>(), -12);
  assert_true(read_text(out / "forecast.svg").rfind("<svg", 0) == 0);
  const std::string interpretation_svg = read_text(out / "interpretation.svg");
  assert_true(interpretation_svg.rfind("<svg", 0) == 0);
  assert_true(interpretation_svg.find("<title>season_sin: ") != std::string::npos);

  // Predictions: validation windows, then one future window per series.
  const tft::Predictions mine = trainer.predict();
  const std::size_t validation = trainer.dataset().validation_windows().size();
  assert_int_equal(mine.forecasts.size(), validation + 3);
  const tft::Forecast& future = mine.forecasts.back();
  assert_true(future.future);
  assert_int_equal(future.times.front(), 120);
  assert_int_equal(future.times.back(), 123);
  assert_true(std::isnan(future.actuals.front()));
  assert_true(std::isfinite(future.values.front()));
  assert_false(mine.forecasts.front().future);
  assert_true(std::isfinite(mine.forecasts.front().actuals.front()));

  // Saved model: loading it and predicting gives exactly the in-memory predictions.
  tft::SavedModel saved = tft::SavedModel::load(out / "model");
  assert_true(same_weights(saved.model(), trainer.model()));
  assert_true(forecasts_bitwise_equal(saved.predict(trainer.dataset()), mine));
  const tft::TimeSeriesDataset reread = saved.load_dataset();  // the CSV again, stored transforms
  assert_true(forecasts_bitwise_equal(saved.predict(reread), mine));
  fs::remove_all(dir);
}

TFT_TEST(test_resumed_run_ends_bitwise_like_an_uninterrupted_one) {
  const fs::path dir = scratch_dir("resume");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig four = synthetic_config(dir / "data.csv", dir / "straight");
  four.training.epochs = 4;
  four.training.lr_schedule.patience = 1;  // the schedule's state matters across the break
  Trainer straight(four);
  const TrainReport a = straight.train();

  TrainConfig two = four;
  two.training.epochs = 2;
  two.output.directory = (dir / "interrupted").string();
  {
    Trainer first(two);
    const TrainReport b1 = first.train();
    assert_int_equal(b1.epochs_run, 2);
  }
  TrainConfig again = four;
  again.output.directory = two.output.directory;
  Trainer second(again);
  const TrainReport b = second.train(nullptr, /*resume=*/true);
  assert_int_equal(b.resumed_from_epoch, 2);
  assert_int_equal(b.epochs_run, 4);
  assert_int_equal(b.history.size(), 4);
  for (std::size_t i = 0; i < 4; ++i) {
    assert_true(a.history[i].train_loss == b.history[i].train_loss);
    assert_true(a.history[i].validation.loss == b.history[i].validation.loss);
    assert_true(a.history[i].learning_rate == b.history[i].learning_rate);
  }
  assert_int_equal(a.best_epoch, b.best_epoch);
  // The kept (best) weights and the last epoch's weights are bitwise equal.
  assert_true(same_weights(straight.model(), second.model()));
  assert_true(tft::module_states_equal(snapshot_weights(straight.snapshot_path(), four),
                                       snapshot_weights(second.snapshot_path(), again)));
  // Resuming a finished run trains nothing more.
  const TrainReport c = second.train(nullptr, true);
  assert_int_equal(c.epochs_run, 4);
  assert_int_equal(c.resumed_from_epoch, 4);
  assert_true(same_weights(straight.model(), second.model()));
  fs::remove_all(dir);
}

TFT_TEST(test_nan_guard_with_huge_learning_rate_keeps_initial_weights) {
  const fs::path dir = scratch_dir("nan_lr");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.training.learning_rate = 1e30;
  config.training.gradient_clip_norm = 0.0;
  config.training.lr_schedule.min_lr = 0.0;
  Trainer trainer(config);
  Trainer untouched(config);
  TFT_ASSERT_THROWS_WITH(trainer.train(), tft::NumericalError, "learning rate 1e+30");
  TFT_ASSERT_THROWS_WITH(trainer.train(), tft::NumericalError, "initial weights");
  assert_true(all_finite(trainer.model()));
  assert_true(same_weights(trainer.model(), untouched.model()));
  assert_false(fs::exists(dir / "out" / "model"));  // nothing better than the initial model
  fs::remove_all(dir);
}

TFT_TEST(test_nan_guard_with_poisoned_data_keeps_the_best_epoch) {
  const fs::path dir = scratch_dir("nan_data");
  write_text(dir / "clean.csv", synthetic_csv(80));
  write_text(dir / "poisoned.csv", synthetic_csv(80, /*poison_row=*/30));
  TrainConfig clean = synthetic_config(dir / "clean.csv", dir / "out");
  clean.data.scaling = tft::ScalingMode::None;  // the poison reaches the model as it is
  clean.training.epochs = 1;
  Trainer first(clean);
  first.train();  // epoch 1: the best model so far

  TrainConfig poisoned = clean;
  poisoned.data.path = (dir / "poisoned.csv").string();
  poisoned.training.epochs = 3;
  Trainer second(poisoned);
  try {
    second.train(nullptr, /*resume=*/true);  // epoch 2 meets the poisoned window
    fail_msg("no NumericalError");
  } catch (const tft::NumericalError& e) {
    const std::string message = e.what();
    if (message.find("epoch 2") == std::string::npos ||
        message.find("weights of epoch 1") == std::string::npos ||
        message.find("saved to") == std::string::npos) {
      fail_msg("unexpected message: %s", e.what());
    }
  }
  assert_true(same_weights(second.model(), first.model()));
  tft::SavedModel saved = tft::SavedModel::load(dir / "out" / "model");
  assert_true(same_weights(saved.model(), first.model()));
  fs::remove_all(dir);
}

TFT_TEST(test_cancel_from_the_callback_then_resume) {
  const fs::path dir = scratch_dir("cancel");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.training.epochs = 3;
  Trainer trainer(config);
  std::int64_t epochs_seen = 0;
  const auto stop_in_epoch_two = [&](const tft::TrainProgress& p) {
    if (p.kind == tft::TrainProgress::Kind::Epoch) {
      ++epochs_seen;
      assert_non_null(p.metrics);
      return true;
    }
    return !(p.epoch == 2 && p.step == 2);
  };
  TFT_ASSERT_THROWS_WITH(trainer.train(stop_in_epoch_two), tft::CancelledError,
                         "cancelled at epoch 2, step 2/");
  assert_int_equal(epochs_seen, 1);
  assert_true(fs::exists(trainer.snapshot_path()));
  assert_false(fs::exists(dir / "out" / "summary.json"));
  const TrainReport report = trainer.train(nullptr, /*resume=*/true);
  assert_int_equal(report.resumed_from_epoch, 1);
  assert_int_equal(report.epochs_run, 3);
  fs::remove_all(dir);
}

TFT_TEST(test_cancel_from_another_thread) {
  const fs::path dir = scratch_dir("cancel_thread");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  Trainer trainer(config);
  std::mutex mutex;
  std::condition_variable changed;
  bool started = false, cancelled = false;
  std::thread canceller([&] {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return started; });
    trainer.cancel();
    cancelled = true;
    changed.notify_all();
  });
  const auto wait_for_cancel = [&](const tft::TrainProgress& p) {
    if (p.step == 1 && p.epoch == 1) {
      std::unique_lock<std::mutex> lock(mutex);
      started = true;
      changed.notify_all();
      changed.wait(lock, [&] { return cancelled; });
    }
    return true;
  };
  TFT_ASSERT_THROWS_WITH(trainer.train(wait_for_cancel), tft::CancelledError,
                         "cancelled at epoch 1, step 2/");
  canceller.join();
  // The request was consumed: the next run trains normally.
  config.training.epochs = 1;
  Trainer again(config);
  assert_int_equal(again.train().epochs_run, 1);
  fs::remove_all(dir);
}

TFT_TEST(test_early_stopping_and_the_lr_schedule) {
  const fs::path dir = scratch_dir("early");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  // A step far below float32 resolution: the weights (and the validation loss) never change.
  config.training.learning_rate = 1e-30;
  config.training.lr_schedule.patience = 1;
  config.training.lr_schedule.min_lr = 0.0;
  config.training.early_stopping_patience = 2;
  config.training.epochs = 10;
  Trainer trainer(config);
  const TrainReport report = trainer.train();
  assert_true(report.early_stopped);
  assert_int_equal(report.epochs_run, 3);
  assert_int_equal(report.best_epoch, 1);
  assert_true(report.history[0].best);
  assert_false(report.history[2].best);
  assert_true(report.history[0].learning_rate == 1e-30);
  assert_true(report.history[1].learning_rate == 1e-30);
  assert_true(report.history[2].learning_rate == 5e-31);
  fs::remove_all(dir);
}

// training.weight_decay, model.embedding_dropout and training.lr_warmup_steps reach the run:
// each changes its losses, a one-step warm-up (a factor of 1) changes no bit, and a warm-up far
// longer than the run keeps the rate, and so the model, near where it started.
TFT_TEST(test_regularisation_and_warm_up_reach_the_run) {
  const fs::path dir = scratch_dir("regularisation");
  write_text(dir / "data.csv", synthetic_csv(60));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "base");
  config.training.epochs = 2;
  config.training.batch_size = 16;
  const auto run = [&](const std::string& name, const auto& change) {
    TrainConfig c = config;
    c.output.directory = (dir / name).string();
    change(c);
    Trainer trainer(c);
    return std::make_pair(trainer.train(), tft::copy_module_state(*trainer.model()));
  };
  const auto base = run("base", [](TrainConfig&) {});
  const auto one_step = run("one_step", [](TrainConfig& c) { c.training.lr_warmup_steps = 1; });
  assert_true(tft::module_states_equal(base.second, one_step.second));
  for (std::size_t i = 0; i < base.first.history.size(); ++i) {
    assert_true(base.first.history[i].train_loss == one_step.first.history[i].train_loss);
  }
  const double base_loss = base.first.history.back().train_loss;
  const auto decayed = run("decayed", [](TrainConfig& c) { c.training.weight_decay = 0.1; });
  assert_true(decayed.first.history.back().train_loss != base_loss);
  const auto dropped = run("dropped", [](TrainConfig& c) { c.model.embedding_dropout = 0.3; });
  assert_true(dropped.first.history.back().train_loss != base_loss);
  const auto warming =
      run("warming", [](TrainConfig& c) { c.training.lr_warmup_steps = 1000000000; });
  const double initial = base.first.initial_validation_loss;
  const double moved = std::abs(base.first.history.back().validation.loss - initial);
  const double barely = std::abs(warming.first.history.back().validation.loss - initial);
  std::printf("  validation loss moved %g in the base run, %g under a 1e9-step warm-up\n", moved,
              barely);
  assert_true(barely < 1e-3 * moved);
  fs::remove_all(dir);
}

TFT_TEST(test_checkpoint_config_is_checked_against_the_units) {
  const fs::path dir = scratch_dir("units");
  write_text(dir / "data.csv", synthetic_csv(60));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.checkpoint = tft::CheckpointConfig::selective({1, 9});
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError, "out of range for 6 units");
  config.training.device = "tpu";
  config.checkpoint = tft::CheckpointConfig::none();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::Error, "training.device");
  fs::remove_all(dir);
}

TFT_TEST(test_dynamic_checkpointing_runs_the_measured_plan) {
  const fs::path dir = scratch_dir("dynamic");
  write_text(dir / "data.csv", synthetic_csv(60));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.checkpoint = tft::CheckpointConfig::dynamic(6, 0.5);
  // This small model's units would run in one chunk each (ModelConfig::min_chunk_elements);
  // with chunks the plan has whole units and single chunks to choose from, as on a real model.
  config.model.unit_chunks = {{"historical_encoder", 4}, {"lstm_encoder", 4}};
  Trainer trainer(config);
  const tft::MemoryReport report = trainer.memory_report();
  assert_true(report.plan.has_value());
  assert_true(trainer.model()->checkpointing() == report.plan->config);
  assert_true(trainer.model()->checkpointed_chunks() == report.plan->chunk_limits);
  assert_true(report.checkpoint_summary.find(" -> " + report.plan->chosen()) != std::string::npos);
  if (report.plan->achievable) {
    // The trainer's own measurement of the plan meets the target too.
    assert_true(static_cast<double>(report.checkpointed_peak_bytes) <=
                (1.0 + tft::kPlanTolerance) * 0.5 *
                    static_cast<double>(report.unchecked_peak_bytes));
  }
  // Per unit: what the plan saves and keeps adds up to what the whole unit would save, and the
  // units' planned recompute adds up to the plan's.
  double recompute = 0.0;
  for (const tft::PlannedUnit& u : report.plan->units) {
    if (u.saved_bytes > 0) assert_int_equal(u.planned_saved_bytes + u.kept_bytes, u.saved_bytes);
    if (!u.checkpointed()) assert_int_equal(u.planned_saved_bytes, 0);
    recompute += u.planned_recompute_seconds;
  }
  assert_true(std::abs(recompute - report.plan->predicted_recompute_seconds) < 1e-12);
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_learns_writes_outputs_and_saved_model_predicts_bitwise),
      cmocka_unit_test(test_resumed_run_ends_bitwise_like_an_uninterrupted_one),
      cmocka_unit_test(test_nan_guard_with_huge_learning_rate_keeps_initial_weights),
      cmocka_unit_test(test_nan_guard_with_poisoned_data_keeps_the_best_epoch),
      cmocka_unit_test(test_cancel_from_the_callback_then_resume),
      cmocka_unit_test(test_cancel_from_another_thread),
      cmocka_unit_test(test_early_stopping_and_the_lr_schedule),
      cmocka_unit_test(test_regularisation_and_warm_up_reach_the_run),
      cmocka_unit_test(test_checkpoint_config_is_checked_against_the_units),
      cmocka_unit_test(test_dynamic_checkpointing_runs_the_measured_plan),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
