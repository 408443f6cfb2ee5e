// Mixed precision end to end on the CPU: bf16-mixed learns, its saved model forecasts bitwise
// like the trainer, a run resumed inside an epoch ends bitwise like an uninterrupted one, and
// its arithmetic really differs from float32's. The loss scaler of 16-mixed (CUDA-only in
// training) follows torch.amp.GradScaler step by step on CPU tensors, and its state survives a
// snapshot. (tests/cuda covers bf16 and fp16 training on a GPU.)
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/torch_compat.h"
#include "optim/loss_scaler.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::LossScaler;
using tft::Precision;
using tft::TrainConfig;
using tft::Trainer;
using tft::TrainReport;
using namespace tft::testing;

TFT_TEST(test_bf16_mixed_learns_and_its_saved_model_forecasts_bitwise) {
  const fs::path dir = scratch_dir("bf16_learn");
  write_text(dir / "data.csv", synthetic_csv());
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.training.precision = Precision::Bf16Mixed;
  Trainer trainer(config);
  const TrainReport report = trainer.train();
  std::printf("  bf16-mixed: validation loss %.4f -> %.4f\n", report.initial_validation_loss,
              report.best_validation_loss);
  assert_true(std::isfinite(report.initial_validation_loss));
  assert_true(report.best_validation_loss <= 0.5 * report.initial_validation_loss);
  // Master weights stay float32.
  for (const auto& p : trainer.model()->parameters()) assert_true(p.scalar_type() == at::kFloat);

  TrainConfig fp32 = config;
  fp32.training.precision = Precision::Float32;
  fp32.training.epochs = 1;
  fp32.output.directory = (dir / "fp32").string();
  TrainConfig bf16 = config;
  bf16.training.epochs = 1;
  bf16.output.directory = (dir / "bf16").string();
  const TrainReport a = Trainer(fp32).train(), b = Trainer(bf16).train();
  assert_true(a.history[0].train_loss != b.history[0].train_loss);  // really another arithmetic
  assert_true(std::fabs(a.history[0].train_loss - b.history[0].train_loss) <
              0.05 * a.history[0].train_loss);

  // The saved config keeps the precision, and the saved model forecasts in it.
  tft::SavedModel saved = tft::SavedModel::load(dir / "out" / "model");
  assert_true(saved.config().training.precision == Precision::Bf16Mixed);
  assert_true(saved.model()->precision() == Precision::Bf16Mixed);
  assert_true(forecasts_bitwise_equal(saved.predict(trainer.dataset()), trainer.predict()));
  fs::remove_all(dir);
}

TFT_TEST(test_bf16_mixed_resumed_inside_an_epoch_ends_bitwise) {
  const fs::path dir = scratch_dir("bf16_resume");
  write_text(dir / "data.csv", synthetic_csv(80));
  TrainConfig three = synthetic_config(dir / "data.csv", dir / "straight");
  three.training.precision = Precision::Bf16Mixed;
  three.training.epochs = 3;
  three.training.batch_size = 8;
  Trainer straight(three);
  const TrainReport a = straight.train();
  const std::int64_t steps = a.history[0].steps;
  assert_true(steps >= 3);

  // Stopped after step 2 of epoch 2 (a snapshot every steps + 2 steps), then resumed.
  TrainConfig interrupted = three;
  interrupted.output.directory = (dir / "interrupted").string();
  interrupted.training.snapshot_every_steps = steps + 2;
  {
    Trainer first(interrupted);
    const auto stop_after_snapshot = [&](const tft::TrainProgress& p) {
      return !(p.kind == tft::TrainProgress::Kind::Step && p.epoch == 2 && p.step == 2);
    };
    TFT_ASSERT_THROWS_WITH(first.train(stop_after_snapshot), tft::CancelledError, "cancelled");
  }
  Trainer second(interrupted);
  const TrainReport b = second.train(nullptr, /*resume=*/true);
  assert_int_equal(b.history.size(), 3);
  for (std::size_t i = 0; i < 3; ++i) {
    assert_true(a.history[i].train_loss == b.history[i].train_loss);
    assert_true(a.history[i].validation.loss == b.history[i].validation.loss);
  }
  assert_true(same_weights(straight.model(), second.model()));
  fs::remove_all(dir);
}

// What torch.amp.GradScaler does: scale, unscale (recording inf/NaN), skip, back off by 0.5,
// grow by 2 after growth_interval clean steps.
TFT_TEST(test_loss_scaler_follows_grad_scaler) {
#if !TFT_TORCH_AT_LEAST(2, 3)
  skip();  // ATen's amp kernels have no CPU implementation before 2.3 (CUDA only)
#else
  tft::LossScalerOptions options;
  options.init_scale = 1024.0;
  options.growth_interval = 3;
  LossScaler scaler(c10::Device(c10::kCPU), options);
  at::Tensor w = at::ones({4}).requires_grad_(true);
  const std::vector<at::Tensor> params{w};
  assert_true(scaler.scale(at::full({}, 0.5)).item<float>() == 512.0f);

  const auto step_with_gradient = [&](float value) {
    w.mutable_grad() = at::full({4}, value * static_cast<float>(scaler.current_scale()));
    scaler.unscale(params);
    const bool allowed = scaler.step_allowed();
    scaler.update();
    return allowed;
  };
  // Clean steps: the gradients come back unscaled; the scale doubles after 3 of them.
  assert_true(step_with_gradient(0.25f));
  assert_true(w.grad()[0].item<float>() == 0.25f);
  assert_true(step_with_gradient(0.25f));
  assert_true(scaler.current_scale() == 1024.0);
  assert_true(step_with_gradient(0.25f));
  assert_true(scaler.current_scale() == 2048.0);
  assert_int_equal(scaler.state().growth_tracker, 0);
  // An overflow: the step is skipped, the scale halves and the count of clean steps restarts.
  assert_true(step_with_gradient(0.25f));
  assert_int_equal(scaler.state().growth_tracker, 1);
  assert_false(step_with_gradient(std::numeric_limits<float>::infinity()));
  assert_true(scaler.current_scale() == 1024.0);
  assert_int_equal(scaler.state().growth_tracker, 0);
  assert_false(step_with_gradient(std::numeric_limits<float>::quiet_NaN()));
  assert_true(scaler.current_scale() == 512.0);

  // Its state round-trips (through a snapshot's JSON) and is restored exactly.
  const tft::LossScalerState state = scaler.state();
  const tft::LossScalerState back = tft::loss_scaler_state_from_json(
      nlohmann::json::parse(tft::loss_scaler_state_to_json(state).dump()), "snapshot 'x'");
  LossScaler restored(c10::Device(c10::kCPU), options);
  restored.set_state(back);
  assert_true(restored.current_scale() == 512.0);
  assert_int_equal(restored.state().growth_tracker, state.growth_tracker);
#endif
}

TFT_TEST(test_loss_scaler_state_errors_name_the_snapshot) {
  TFT_ASSERT_THROWS_WITH(
      tft::loss_scaler_state_from_json(nlohmann::json::parse("{\"scale\": 2}"), "snapshot 'a.pt'"),
      tft::IoError, "snapshot 'a.pt': loss_scaler");
  TFT_ASSERT_THROWS_WITH(
      tft::loss_scaler_state_from_json(
          nlohmann::json::parse("{\"scale\": -1, \"growth_tracker\": 0}"), "snapshot 'a.pt'"),
      tft::IoError, "are not a loss scaler's state");
}

// 16-mixed needs CUDA; QAT and mixed precision together are refused, saying why.
TFT_TEST(test_precision_combinations_that_cannot_work_are_config_errors) {
  const fs::path dir = scratch_dir("precision_errors");
  write_text(dir / "data.csv", synthetic_csv(60));
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.training.precision = Precision::Fp16Mixed;
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError,
                         "training.precision: 16-mixed needs a CUDA device");
  config.training.precision = Precision::Bf16Mixed;
  config.training.qat.enabled = true;
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError,
                         "would round the fake-quantized weights and inputs off their int8 grid");
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bf16_mixed_learns_and_its_saved_model_forecasts_bitwise),
      cmocka_unit_test(test_bf16_mixed_resumed_inside_an_epoch_ends_bitwise),
      cmocka_unit_test(test_loss_scaler_follows_grad_scaler),
      cmocka_unit_test(test_loss_scaler_state_errors_name_the_snapshot),
      cmocka_unit_test(test_precision_combinations_that_cannot_work_are_config_errors),
  };
  return cmocka_run_group_tests_name("mixed_precision", tests, nullptr, nullptr);
}
