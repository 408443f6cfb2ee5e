#include "train/backtest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ops/tensor.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "data/seasonality.h"
#include "report/baselines.h"
#include "report/forecast_csv.h"
#include "report/series_columns.h"
#include "train/trainer.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

// One fold's forecast steps, laid out for MetricAccumulator: [windows, horizon, quantiles]
// forecasts of the model and of both baselines (a point forecast repeated per quantile), and the
// actuals [windows, horizon]; all in original units.
struct FoldForecasts {
  std::vector<double> model, naive, seasonal_naive, actual;
  std::int64_t windows = 0;
};

// A MetricAccumulator's figures for forecasts in original units (the loss then is too).
void accumulate(MetricAccumulator& into, const std::vector<double>& forecasts,
                const std::vector<double>& actual, std::int64_t windows, std::int64_t horizon,
                std::int64_t quantiles) {
  if (windows == 0) return;
  const at::Tensor prediction =
      at::tensor(forecasts, at::kDouble).view({windows, horizon, quantiles});
  const at::Tensor target = at::tensor(actual, at::kDouble).view({windows, horizon});
  into.add(prediction, target, prediction, target);
}

ValidationMetrics score(const std::vector<double>& forecasts, const FoldForecasts& fold,
                        const std::vector<double>& quantiles, std::int64_t horizon) {
  MetricAccumulator metrics(quantiles);
  accumulate(metrics, forecasts, fold.actual, fold.windows, horizon,
             static_cast<std::int64_t>(quantiles.size()));
  return metrics.result();
}

std::string csv_number(double value) { return float_text(static_cast<float>(value)); }

}  // namespace

BacktestReport run_backtest(const TrainConfig& config_in, const BacktestProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  TrainConfig config = config_in;
  config.validate();
  if (!config.training.init_from.empty()) {
    throw ConfigError(
        "backtest: training.init_from is not used by a backtest (backtest.mode refit refits "
        "each fold from the fold before); leave it empty");
  }
  const std::int64_t folds = config.backtest.folds;
  const std::int64_t horizon = config.windows.prediction_length;
  const bool refit = config.backtest.mode == BacktestMode::Refit;
  const fs::path out = config.output.directory;

  const TimeSeriesDataset full = TimeSeriesDataset::load(config);
  std::vector<std::int64_t> full_lengths;
  for (const SeriesInfo& info : full.series()) full_lengths.push_back(info.length);
  auto origins_of = [&](std::int64_t fold) {
    std::vector<std::int64_t> origins;
    for (const std::int64_t n : full_lengths) {
      origins.push_back(std::max<std::int64_t>(0, n - (folds - fold + 1) * horizon));
    }
    return origins;
  };
  {
    const TimeSeriesDataset first = full.cut_at(config, origins_of(1));
    if (first.training_windows().empty()) {
      throw ConfigError("backtest: with backtest.folds " + std::to_string(folds) + " of " +
                        std::to_string(horizon) +
                        " rows (windows.prediction_length), no series keeps a training window "
                        "before fold 1's origin; use fewer folds or more rows");
    }
  }

  const std::vector<double>& quantiles = config.model.quantiles;
  const auto nq = static_cast<std::int64_t>(quantiles.size());
  BacktestReport report;
  report.mode = to_string(config.backtest.mode);
  report.folds = folds;
  report.output_directory = out.string();
  MetricAccumulator pooled_model(quantiles), pooled_naive(quantiles), pooled_seasonal(quantiles);
  bool any_seasonal = false;

  std::string csv = "fold";
  const std::vector<std::string> series_columns = series_column_names(config.data.group_columns);
  for (const std::string& name : series_columns) csv += "," + csv_field(name);
  csv += ",origin,time,horizon";
  for (double q : quantiles) csv += ",q" + shortest_double(q);
  csv += ",actual,naive,seasonal_naive\n";

  fs::path previous_model;
  DataTransforms previous_transforms;
  auto write_outputs = [&] {
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report.model = pooled_model.result();
    report.naive = pooled_naive.result();
    report.seasonal_naive = any_seasonal ? pooled_seasonal.result() : ValidationMetrics{};
    fs::create_directories(out);
    write_file_atomically(out / "backtest.csv", csv);
    write_file_atomically(out / "backtest.json", backtest_report_to_json(report).dump(2) + "\n");
    write_file_atomically(out / "backtest.svg", backtest_svg(report));
  };

  for (std::int64_t fold = 1; fold <= folds; ++fold) {
    const std::vector<std::int64_t> origins = origins_of(fold);
    TrainConfig fold_config = config;
    fold_config.output.directory = (out / "folds" / ("fold-" + std::to_string(fold))).string();
    BacktestFoldResult result;
    result.fold = fold;
    result.started_from = "fresh weights";
    std::optional<Trainer> trainer;
    if (refit && fold > 1) {
      TimeSeriesDataset data = full.cut_at(config, origins, &previous_transforms.scaler);
      const TargetNormalizerConfig& n = previous_transforms.target_normalizer;
      data.recenter(TargetChoice{n.scope, n.center, previous_transforms.target_season},
                    "fold " + std::to_string(fold - 1) + "'s model");
      fold_config.training.init_from = previous_model.string();
      if (config.backtest.refit_epochs > 0) {
        fold_config.training.epochs = config.backtest.refit_epochs;
      }
      result.started_from = previous_model.string();
      trainer.emplace(fold_config, std::move(data));
    } else {
      trainer.emplace(fold_config, full.cut_at(config, origins));
    }

    TrainReport trained;
    try {
      trained = trainer->train(
          [&](const TrainProgress& p) { return !progress || progress(fold, folds, p); });
    } catch (const CancelledError&) {
      write_outputs();  // the finished folds stay on disk
      throw CancelledError("backtest: cancelled in fold " + std::to_string(fold) + " of " +
                           std::to_string(folds) + "; the " + std::to_string(fold - 1) +
                           " finished folds are in " + (out / "backtest.csv").string());
    }
    result.epochs_run = trained.epochs_run;
    result.train_seconds = trained.train_seconds;

    // The fold's forecasts: one window per series whose decoder is the rows after its origin.
    const TimeSeriesDataset windows = trainer->dataset().windows_at(origins, full_lengths);
    const Predictions predictions = trainer->predict(windows);
    const BaselineScores baselines =
        score_baselines(windows, windows.validation_windows(), quantiles, config.model.seasonality);
    const std::int64_t m = baselines.seasonal_naive.windows > 0 ? baselines.seasonality : 0;
    const std::vector<float>& target = windows.real_column(config.data.target);
    FoldForecasts f;
    for (const Forecast& forecast : predictions.forecasts) {
      if (forecast.future) continue;
      const SeriesInfo& info = windows.series()[forecast.series];
      const auto last = static_cast<std::size_t>(info.offset + origins[forecast.series] - 1);
      if (f.windows == 0) result.origin = windows.format_time(windows.times()[last]);
      ++f.windows;
      std::string series;
      if (config.data.group_columns.empty()) {
        series = csv_field(series_label(windows, forecast.series));
      } else {
        for (std::size_t i = 0; i < info.group_values.size(); ++i) {
          series += (i > 0 ? "," : "") + csv_field(info.group_values[i]);
        }
      }
      for (std::int64_t h = 0; h < horizon; ++h) {
        const double naive = target[last];
        const double seasonal = m > 0 ? target[seasonal_naive_row(last, h, m)] : NAN;
        for (std::int64_t q = 0; q < nq; ++q) {
          f.model.push_back(forecast.value(static_cast<std::size_t>(h), static_cast<std::size_t>(q),
                                           static_cast<std::size_t>(nq)));
          f.naive.push_back(naive);
          f.seasonal_naive.push_back(seasonal);
        }
        f.actual.push_back(forecast.actuals[static_cast<std::size_t>(h)]);
        csv += std::to_string(fold) + "," + series + "," +
               csv_field(windows.format_time(forecast.origin)) + "," +
               csv_field(windows.format_time(forecast.times[static_cast<std::size_t>(h)])) + "," +
               std::to_string(h + 1);
        for (std::int64_t q = 0; q < nq; ++q) {
          csv += "," +
                 float_text(forecast.value(static_cast<std::size_t>(h), static_cast<std::size_t>(q),
                                           static_cast<std::size_t>(nq)));
        }
        csv += "," + float_text(forecast.actuals[static_cast<std::size_t>(h)]) + "," +
               csv_number(naive) + "," + (m > 0 ? csv_number(seasonal) : std::string()) + "\n";
      }
    }
    result.series = f.windows;
    result.model = score(f.model, f, quantiles, horizon);
    result.naive = score(f.naive, f, quantiles, horizon);
    accumulate(pooled_model, f.model, f.actual, f.windows, horizon, nq);
    accumulate(pooled_naive, f.naive, f.actual, f.windows, horizon, nq);
    if (m > 0) {
      result.seasonal_naive = score(f.seasonal_naive, f, quantiles, horizon);
      result.seasonality = m;
      accumulate(pooled_seasonal, f.seasonal_naive, f.actual, f.windows, horizon, nq);
      any_seasonal = true;
    }
    report.finished.push_back(std::move(result));
    previous_model = fs::path(fold_config.output.directory) / "model";
    previous_transforms = trainer->dataset().transforms();
    write_outputs();
  }
  return report;
}

}  // namespace tft
