// A rolling-origin backtest (train/backtest.h) on the synthetic three-series problem: fold 1
// trains exactly what a run on the file cut at its origin trains; each fold forecasts the rows
// after its origin with their actuals and both baselines; refit mode refits the fold before's
// model; cancelling leaves the finished folds; impossible folds are refused up front.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "train/backtest.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TrainConfig;
using namespace tft::testing;

namespace {

constexpr int kRows = 120;   // per series
constexpr int kHorizon = 4;  // synthetic_config's prediction_length
constexpr int kFolds = 3;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

// The synthetic CSV with each series cut to its first `rows` rows.
std::string cut_csv(const std::string& csv, int rows) {
  const std::vector<std::string> lines = lines_of(csv);
  std::string out = lines[0] + "\n";
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const int t = std::stoi(fields_of(lines[i])[2]);
    if (t < rows) out += lines[i] + "\n";
  }
  return out;
}

TrainConfig backtest_config(const fs::path& dir) {
  TrainConfig config = synthetic_config(dir / "data.csv", dir / "out");
  config.training.epochs = 2;
  config.backtest.folds = kFolds;
  return config;
}

}  // namespace

TFT_TEST(test_scratch_folds_train_on_the_rows_before_their_origin) {
  const fs::path dir = scratch_dir("backtest");
  const std::string csv = synthetic_csv(kRows);
  write_text(dir / "data.csv", csv);
  const TrainConfig config = backtest_config(dir);
  std::vector<std::int64_t> folds_seen;
  const tft::BacktestReport report =
      tft::run_backtest(config, [&](std::int64_t fold, std::int64_t folds, const auto&) {
        assert_int_equal(folds, kFolds);
        if (folds_seen.empty() || folds_seen.back() != fold) folds_seen.push_back(fold);
        return true;
      });
  assert_true(folds_seen == (std::vector<std::int64_t>{1, 2, 3}));
  assert_int_equal(static_cast<int>(report.finished.size()), kFolds);

  // Fold 1 equals a run on the file cut at its origin: same data, fit and seed.
  const int origin = kRows - kFolds * kHorizon;
  write_text(dir / "cut.csv", cut_csv(csv, origin));
  TrainConfig cut = synthetic_config(dir / "cut.csv", dir / "cut");
  cut.training.epochs = 2;
  const tft::TrainReport plain = tft::Trainer(cut).train();
  const auto fold1 = nlohmann::json::parse(read_text(dir / "out/folds/fold-1/summary.json"));
  assert_true(fold1["final_validation_loss"].get<double>() == plain.final_validation_loss);
  assert_string_equal(report.finished[0].origin.c_str(), std::to_string(origin - 1).c_str());

  // backtest.csv: a row per fold, series and horizon step; actuals from the file, the naive
  // forecast the series' value at the origin.
  const std::vector<std::string> rows = lines_of(read_text(dir / "out/backtest.csv"));
  assert_string_equal(rows[0].c_str(),
                      "fold,series,origin,time,horizon,q0.1,q0.5,q0.9,actual,naive,"
                      "seasonal_naive");
  assert_int_equal(static_cast<int>(rows.size()), 1 + kFolds * 3 * kHorizon);
  const std::vector<std::string> data = lines_of(csv);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> f = fields_of(rows[i]);
    const int fold = std::stoi(f[0]);
    const int series = f[1] == "a" ? 0 : f[1] == "b" ? 1 : 2;
    const int fold_origin = kRows - (kFolds - fold + 1) * kHorizon;
    assert_int_equal(std::stoi(f[2]), fold_origin - 1);
    assert_int_equal(std::stoi(f[3]), fold_origin + std::stoi(f[4]) - 1);
    const std::vector<std::string> actual_row =
        fields_of(data[1 + series * kRows + std::stoi(f[3])]);
    const std::vector<std::string> last_row = fields_of(data[1 + series * kRows + fold_origin - 1]);
    assert_true(std::abs(std::stod(f[8]) - std::stod(actual_row[6])) < 1e-4);
    assert_true(std::abs(std::stod(f[9]) - std::stod(last_row[6])) < 1e-4);
  }
  const auto json = nlohmann::json::parse(read_text(dir / "out/backtest.json"));
  assert_int_equal(json["finished_folds"].get<int>(), kFolds);
  assert_true(json["overall"]["model"]["q_risk_p50"].get<double>() > 0.0);
  assert_true(json["per_fold"][2]["naive"]["windows"].get<int>() == 3);
  assert_true(fs::exists(dir / "out/backtest.svg"));
  fs::remove_all(dir);
}

TFT_TEST(test_refit_folds_start_from_the_fold_before) {
  const fs::path dir = scratch_dir("backtest_refit");
  write_text(dir / "data.csv", synthetic_csv(kRows));
  TrainConfig config = backtest_config(dir);
  config.backtest.mode = tft::BacktestMode::Refit;
  config.backtest.refit_epochs = 1;
  const tft::BacktestReport report = tft::run_backtest(config);
  assert_string_equal(report.mode.c_str(), "refit");
  assert_int_equal(report.finished[0].epochs_run, 2);
  for (int fold = 2; fold <= kFolds; ++fold) {
    const fs::path before = dir / "out/folds" / ("fold-" + std::to_string(fold - 1)) / "model";
    const auto summary = nlohmann::json::parse(
        read_text(dir / "out/folds" / ("fold-" + std::to_string(fold)) / "summary.json"));
    assert_string_equal(summary["init_from"]["path"].get<std::string>().c_str(),
                        fs::weakly_canonical(before).c_str());
    assert_int_equal(report.finished[static_cast<std::size_t>(fold - 1)].epochs_run, 1);
  }
  fs::remove_all(dir);
}

TFT_TEST(test_cancel_keeps_the_finished_folds_and_bad_folds_are_refused) {
  const fs::path dir = scratch_dir("backtest_cancel");
  write_text(dir / "data.csv", synthetic_csv(kRows));
  TrainConfig config = backtest_config(dir);
  TFT_ASSERT_THROWS_WITH(
      tft::run_backtest(config,
                        [](std::int64_t fold, std::int64_t, const auto&) { return fold < 2; }),
      tft::CancelledError, "cancelled in fold 2 of 3; the 1 finished folds are in");
  const auto json = nlohmann::json::parse(read_text(dir / "out/backtest.json"));
  assert_int_equal(json["finished_folds"].get<int>(), 1);
  assert_int_equal(static_cast<int>(lines_of(read_text(dir / "out/backtest.csv")).size()),
                   1 + 3 * kHorizon);

  config.output.directory = (dir / "too_many").string();
  config.backtest.folds = 40;
  TFT_ASSERT_THROWS_WITH(tft::run_backtest(config), tft::ConfigError,
                         "no series keeps a training window before fold 1's origin");
  config.backtest.folds = 2;
  config.training.init_from = (dir / "out/folds/fold-1/model").string();
  TFT_ASSERT_THROWS_WITH(tft::run_backtest(config), tft::ConfigError,
                         "training.init_from is not used by a backtest");
  assert_false(fs::exists(dir / "too_many"));
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scratch_folds_train_on_the_rows_before_their_origin),
      cmocka_unit_test(test_refit_folds_start_from_the_fold_before),
      cmocka_unit_test(test_cancel_keeps_the_finished_folds_and_bad_folds_are_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
