// What a rolling-origin backtest (train/backtest.h) reports: for each fold, and pooled over the
// folds, the model's forecasts of the rows after the fold's origin against the naive and the
// seasonal-naive forecasts of the same rows, scored like validation (metrics.h: q-risk, MAE and
// coverage in original units). Written as backtest.json, backtest.svg (q-risk per fold against
// both baselines, and the P10-P90 coverage), and a text summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/metrics.h"

namespace tft {

struct BacktestFoldResult {
  std::int64_t fold = 0;  // 1-based
  // The time of the last row before the cut, of the first series forecast in this fold.
  std::string origin;
  std::int64_t series = 0;  // series forecast (one window each)
  ValidationMetrics model;
  ValidationMetrics naive;
  ValidationMetrics seasonal_naive;  // windows == 0: not scored
  std::int64_t seasonality = 0;      // the seasonal naive's rows per season; 0: none
  std::int64_t epochs_run = 0;
  double train_seconds = 0.0;
  std::string started_from;  // "fresh weights", or the model folder it refitted
};

struct BacktestReport {
  std::string mode;                          // "scratch" or "refit"
  std::int64_t folds = 0;                    // asked for
  std::vector<BacktestFoldResult> finished;  // in fold order
  // Pooled over every finished fold's forecasts.
  ValidationMetrics model;
  ValidationMetrics naive;
  ValidationMetrics seasonal_naive;
  double seconds = 0.0;  // wall time of the whole backtest so far
  std::string output_directory;

  // Finished folds whose P50 q-risk is below the naive forecast's.
  std::int64_t folds_beating_naive() const;
};

// {"mode", "folds", "finished_folds", "folds_beating_naive", "seconds", "overall": {"model",
//  "naive", "seasonal_naive"}, "per_fold": [{"fold", "origin", "series", "model", "naive",
//  "seasonal_naive", "seasonality", "epochs_run", "train_seconds", "started_from"}, ...]}, each
// metrics object as validation_metrics_to_json writes it.
nlohmann::ordered_json backtest_report_to_json(const BacktestReport& report);

// The summary tft-train backtest prints: a line per fold and the overall figures.
std::string backtest_summary_text(const BacktestReport& report);

// backtest.svg: P50 q-risk per fold of the model, the naive and the seasonal naive (lines with
// points), and below it the model's P10-P90 interval coverage per fold against the 80% it aims at.
std::string backtest_svg(const BacktestReport& report);

}  // namespace tft
