// Conformal calibration (train/calibration.h): the shifts against their formula, their coverage
// on fresh draws, sorting, the JSON form and its errors, and a run with output.calibration:
// conformal whose saved model forecasts exactly what the trainer forecast.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "common/error.h"
#include "report/calibration.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "support/cmocka_cpp.h"
#include "train/train_test_support.h"

namespace {

// n windows of T steps whose targets are N(0, 1) and whose forecasts of every quantile are 0
// (far too narrow): residuals are the targets.
struct Draws {
  torch::Tensor predictions, targets;
};
Draws standard_normal_draws(std::int64_t n, std::int64_t steps, std::size_t quantiles,
                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Draws d{torch::zeros({n, steps, static_cast<std::int64_t>(quantiles)}), torch::empty({n, steps})};
  float* y = d.targets.data_ptr<float>();
  for (std::int64_t i = 0; i < n * steps; ++i) y[i] = static_cast<float>(normal(rng));
  return d;
}

}  // namespace

// Ranks ceil((n + 1) q) (upper) and floor((n + 1) q) (lower) of the sorted residuals; the
// median is not shifted.
TFT_TEST(shifts_are_the_conformal_order_statistics) {
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  // 9 windows of one step: residuals 1 ... 9 (shuffled), forecasts 0.
  const std::vector<float> values = {5, 2, 9, 1, 7, 3, 8, 6, 4};
  const torch::Tensor targets = torch::tensor(values).view({9, 1});
  const torch::Tensor predictions = torch::zeros({9, 1, 3});
  const tft::QuantileCalibration c = tft::QuantileCalibration::fit(predictions, targets, quantiles);
  assert_false(c.per_step());  // 9 < kMinWindowsPerStep: pooled
  assert_int_equal(c.windows(), 9);
  // n + 1 = 10: q 0.1 -> floor(1) = rank 1; 0.9 -> ceil(9) = 9; 0.5 keeps 0 (its rank would
  // be 5: the period's bias).
  assert_true(c.shifts() == std::vector<double>({1.0, 0.0, 9.0}));
  // A forecast shifted and sorted: 0.1's shift pushed it above 0.5's, and the order is restored.
  const torch::Tensor forecast = torch::tensor({10.0f, 0.0f, 2.0f}).view({1, 1, 3});
  const torch::Tensor shifted = c.apply(forecast);
  assert_true(torch::equal(shifted, torch::tensor({0.0f, 11.0f, 11.0f}).view({1, 1, 3})));
  // Ranks past the ends are clamped: 3 residuals, q 0.9 -> ceil(3.6) = 4 -> 3.
  const tft::QuantileCalibration few = tft::QuantileCalibration::fit(
      torch::zeros({3, 1, 3}), torch::tensor({3.0f, 1.0f, 2.0f}).view({3, 1}), quantiles);
  assert_true(few.shifts() == std::vector<double>({1.0, 0.0, 3.0}));
  // Nothing to fit: no calibration, and apply passes forecasts through.
  const tft::QuantileCalibration none =
      tft::QuantileCalibration::fit(torch::zeros({0, 1, 3}), torch::zeros({0, 1}), quantiles);
  assert_true(none.empty());
  assert_true(none.apply(forecast).data_ptr() == forecast.data_ptr());
  TFT_ASSERT_THROWS_WITH(tft::QuantileCalibration::fit(predictions, targets, {0.5}), tft::DataError,
                         "forecasts must be [N, T, Q] and targets [N, T] with Q 1");
  TFT_ASSERT_THROWS_WITH(c.apply(torch::zeros({1, 2, 3})), tft::DataError,
                         "fitted for forecasts of 1 steps and 3 quantiles, got 2 and 3");
}

// Fitted on 400 draws, the shifts cover fresh draws of the same distribution at each level,
// per step (the second step's spread is 3x the first's, and each gets its own shifts).
TFT_TEST(shifts_cover_fresh_draws_at_each_level) {
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  Draws fit = standard_normal_draws(400, 2, 3, 1);
  fit.targets.select(1, 1).mul_(3.0);
  const tft::QuantileCalibration c =
      tft::QuantileCalibration::fit(fit.predictions, fit.targets, quantiles);
  assert_true(c.per_step());
  Draws fresh = standard_normal_draws(20000, 2, 3, 2);
  fresh.targets.select(1, 1).mul_(3.0);
  const torch::Tensor calibrated = c.apply(fresh.predictions);
  for (std::int64_t h = 0; h < 2; ++h) {
    for (std::int64_t k = 0; k < 3; ++k) {
      const double covered = (fresh.targets.select(1, h) <= calibrated.select(1, h).select(1, k))
                                 .to(torch::kFloat64)
                                 .mean()
                                 .item<double>();
      if (std::fabs(covered - quantiles[static_cast<std::size_t>(k)]) > 0.04) {
        fail_msg("step %lld quantile %.1f: coverage %.4f", static_cast<long long>(h),
                 quantiles[static_cast<std::size_t>(k)], covered);
      }
    }
  }
}

TFT_TEST(calibration_json_round_trips_and_rejects_damage) {
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  const Draws d = standard_normal_draws(40, 3, 3, 3);
  const tft::QuantileCalibration c =
      tft::QuantileCalibration::fit(d.predictions, d.targets, quantiles);
  const nlohmann::json json = c.to_json();
  const tft::QuantileCalibration back = tft::QuantileCalibration::from_json(json, "cal.json");
  assert_true(back.shifts() == c.shifts() && back.quantiles() == c.quantiles() &&
              back.steps() == 3 && back.windows() == 40 && back.per_step());
  nlohmann::json short_row = json;
  short_row["shifts"][1].erase(0);
  TFT_ASSERT_THROWS_WITH(tft::QuantileCalibration::from_json(short_row, "cal.json"), tft::DataError,
                         "cal.json: shifts: expected 3 values per step");
  nlohmann::json wrong_format = json;
  wrong_format["format"] = "something";
  TFT_ASSERT_THROWS_WITH(tft::QuantileCalibration::from_json(wrong_format, "cal.json"),
                         tft::DataError, "cal.json: expected an object with \"format\"");
  nlohmann::json not_numbers = json;
  not_numbers["shifts"][0][0] = "x";
  TFT_ASSERT_THROWS_WITH(tft::QuantileCalibration::from_json(not_numbers, "cal.json"),
                         tft::DataError, "cal.json: ");
  nlohmann::json missing = json;
  missing.erase("steps");
  TFT_ASSERT_THROWS_WITH(tft::QuantileCalibration::from_json(missing, "cal.json"), tft::DataError,
                         "cal.json: ");
}

// A run with output.calibration: conformal reports the shifts and the cross-fitted check, saves
// them with the model, and the saved model forecasts bitwise what the trainer forecast; the
// forecasts differ from the uncalibrated run's by the shifts.
TFT_TEST(conformal_run_saves_and_applies_the_shifts) {
  namespace fs = std::filesystem;
  const fs::path dir = tft::testing::scratch_dir("calibration");
  tft::testing::write_text(dir / "data.csv", tft::testing::synthetic_csv());
  tft::TrainConfig config = tft::testing::synthetic_config(dir / "data.csv", dir / "out");
  config.training.epochs = 2;
  config.output.calibration = tft::CalibrationMethod::Conformal;
  tft::Trainer trainer(config);
  const tft::TrainReport report = trainer.train();
  assert_true(report.calibration.has_value());
  const tft::QuantileCalibration& c = report.calibration->calibration;
  assert_false(c.empty());
  assert_int_equal(c.windows(), report.validation.windows);
  assert_true(report.calibration->cross_fitted.has_value());
  assert_int_equal(report.calibration->cross_fitted->windows, report.validation.windows);
  const nlohmann::json summary =
      nlohmann::json::parse(tft::testing::read_text(dir / "out" / "summary.json"));
  assert_true(summary["calibration"]["method"] == "conformal");
  assert_true(summary["calibration"]["cross_fitted"]["interval_coverage"].is_number());

  assert_true(fs::exists(dir / "out" / "model" / "calibration.json"));
  tft::SavedModel saved = tft::SavedModel::load(dir / "out" / "model");
  assert_true(saved.calibration().shifts() == c.shifts());
  const tft::Predictions from_trainer = trainer.predict();
  const tft::Predictions from_saved = saved.predict(trainer.dataset());
  assert_int_equal(from_trainer.forecasts.size(), from_saved.forecasts.size());
  for (std::size_t i = 0; i < from_trainer.forecasts.size(); ++i) {
    assert_true(from_trainer.forecasts[i].values == from_saved.forecasts[i].values);
  }
  // Without calibration, the same weights forecast something else.
  const tft::Predictions raw = tft::predict_forecasts(
      trainer.model(), trainer.dataset(), config.training.batch_size, c10::Device(c10::kCPU));
  assert_false(raw.forecasts[0].values == from_trainer.forecasts[0].values);

  // A damaged calibration.json is refused by name.
  std::string text = tft::testing::read_text(dir / "out" / "model" / "calibration.json");
  text[text.find('[') + 1] = ' ';
  tft::testing::write_text(dir / "out" / "model" / "calibration.json", text);
  TFT_ASSERT_THROWS_WITH(tft::SavedModel::load(dir / "out" / "model"), tft::IoError,
                         "calibration.json' is damaged");
  fs::remove_all(dir);
}

// Checkpointing changes memory, not numbers, in the same partition (checkpoint.chunk_every_unit:
// by default a unit that recomputes nothing runs whole and draws its dropout masks over the
// whole of it): with center seasonal and conformal calibration, every unit recomputing and none
// give byte-identical forecast.csv and calibration.json.
TFT_TEST(checkpointing_keeps_seasonal_calibrated_forecasts_byte_identical) {
  namespace fs = std::filesystem;
  const fs::path dir = tft::testing::scratch_dir("calibration_checkpointing");
  tft::testing::write_text(dir / "data.csv", tft::testing::synthetic_csv());
  std::string files[2][2];
  for (int checkpointed = 0; checkpointed < 2; ++checkpointed) {
    const fs::path out = dir / (checkpointed ? "every" : "none");
    tft::TrainConfig config = tft::testing::synthetic_config(dir / "data.csv", out);
    config.training.epochs = 2;
    config.data.target_normalizer.center = tft::TargetCenter::Seasonal;
    config.model.seasonality = 12;
    config.output.calibration = tft::CalibrationMethod::Conformal;
    config.checkpoint =
        checkpointed ? tft::CheckpointConfig::uniform(1) : tft::CheckpointConfig::none();
    config.checkpoint.chunk_every_unit = true;
    tft::Trainer trainer(config);
    (void)trainer.train();
    files[checkpointed][0] = tft::testing::read_text(out / "forecast.csv");
    files[checkpointed][1] = tft::testing::read_text(out / "model" / "calibration.json");
  }
  assert_false(files[0][0].empty() || files[0][1].empty());
  assert_true(files[0][0] == files[1][0]);
  assert_true(files[0][1] == files[1][1]);
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shifts_are_the_conformal_order_statistics),
      cmocka_unit_test(shifts_cover_fresh_draws_at_each_level),
      cmocka_unit_test(calibration_json_round_trips_and_rejects_damage),
      cmocka_unit_test(conformal_run_saves_and_applies_the_shifts),
      cmocka_unit_test(checkpointing_keeps_seasonal_calibrated_forecasts_byte_identical),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
