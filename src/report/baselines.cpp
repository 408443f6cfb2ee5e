#include "report/baselines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "common/format.h"
#include "data/batch.h"
#include "data/seasonality.h"

namespace tft {

namespace {

constexpr std::size_t kWindowsPerBatch = 256;

// The point forecast of horizon step h for a window whose last encoder row is `last`.
using PointForecast = double (*)(const std::vector<float>& target, std::size_t last, std::int64_t h,
                                 std::int64_t seasonality);

double naive_forecast(const std::vector<float>& target, std::size_t last, std::int64_t,
                      std::int64_t) {
  return target[last];
}

double seasonal_naive_forecast(const std::vector<float>& target, std::size_t last, std::int64_t h,
                               std::int64_t m) {
  return target[seasonal_naive_row(last, h, m)];
}

ValidationMetrics score(const TimeSeriesDataset& dataset, const std::vector<Window>& windows,
                        const std::vector<double>& quantiles, PointForecast forecast,
                        std::int64_t seasonality) {
  MetricAccumulator metrics(quantiles);
  const std::vector<float>& target = dataset.real_column(dataset.schema().target);
  const std::int64_t steps = dataset.prediction_length();
  const auto q = static_cast<std::int64_t>(quantiles.size());
  for (const std::vector<Window>& part : cut_into_batches(windows, kWindowsPerBatch)) {
    const TrainingBatch batch = gather_batch(dataset, part);
    const auto b = static_cast<std::int64_t>(part.size());
    torch::Tensor original = torch::empty({b, steps, q}, torch::kFloat32);
    torch::Tensor normalized = torch::empty({b, steps, q}, torch::kFloat32);
    float* o = original.data_ptr<float>();
    float* n = normalized.data_ptr<float>();
    const double* center = batch.decoder_center.data_ptr<double>();  // [B, steps]
    const double* scale = batch.target_scale.data_ptr<double>();
    for (std::int64_t i = 0; i < b; ++i) {
      const Window& w = part[static_cast<std::size_t>(i)];
      const auto last = static_cast<std::size_t>(dataset.series()[w.series].offset + w.start +
                                                 dataset.encoder_length() - 1);
      for (std::int64_t h = 0; h < steps; ++h) {
        const double value = forecast(target, last, h, seasonality);
        const auto z = static_cast<float>(
            dataset.normalize_target(value, ScalerStats{center[i * steps + h], scale[i]}));
        for (std::int64_t k = 0; k < q; ++k) {
          o[(i * steps + h) * q + k] = static_cast<float>(value);
          n[(i * steps + h) * q + k] = z;
        }
      }
    }
    metrics.add(normalized, batch.targets, original, unscale_target(dataset, batch, batch.targets));
  }
  return metrics.result();
}

}  // namespace

BaselineScores score_baselines(const TimeSeriesDataset& dataset, const std::vector<Window>& windows,
                               const std::vector<double>& quantiles,
                               std::int64_t configured_seasonality) {
  BaselineScores scores;
  scores.naive = score(dataset, windows, quantiles, naive_forecast, 0);
  std::string source = "model.seasonality";
  const std::int64_t season =
      configured_seasonality > 0 ? configured_seasonality : infer_seasonality(dataset, source);
  scores.seasonality_source = source;
  if (season > dataset.encoder_length()) {
    scores.seasonality_source += ": not scored, longer than windows.encoder_length " +
                                 std::to_string(dataset.encoder_length());
  }
  const std::vector<std::int64_t> seasons =
      candidate_seasons(dataset, season, dataset.encoder_length());
  std::string scored;
  for (const std::int64_t m : seasons) {
    SeasonalNaiveScore s{m, score(dataset, windows, quantiles, seasonal_naive_forecast, m)};
    const bool better = scores.seasonal_naive.windows == 0 ||
                        s.metrics.q_risk_p50 < scores.seasonal_naive.q_risk_p50 ||
                        (!std::isfinite(scores.seasonal_naive.q_risk_p50) &&
                         s.metrics.loss < scores.seasonal_naive.loss);
    if (better) {
      scores.seasonality = m;
      scores.seasonal_naive = s.metrics;
    }
    scored += (scored.empty() ? "" : ", ") + std::to_string(m);
    scores.seasonal_naive_by_season.push_back(std::move(s));
  }
  if (seasons.size() > 1) scores.seasonality_source += "; the best of m = " + scored;
  return scores;
}

nlohmann::ordered_json baseline_scores_to_json(const BaselineScores& scores) {
  nlohmann::ordered_json j;
  j["naive"] = validation_metrics_to_json(scores.naive);
  j["seasonal_naive"] = scores.seasonal_naive.windows > 0
                            ? validation_metrics_to_json(scores.seasonal_naive)
                            : nlohmann::ordered_json();
  j["seasonality"] = scores.seasonality;
  j["seasonality_source"] = scores.seasonality_source;
  nlohmann::ordered_json by_season = nlohmann::ordered_json::array();
  for (const SeasonalNaiveScore& s : scores.seasonal_naive_by_season) {
    by_season.push_back({{"seasonality", s.seasonality},
                         {"q_risk_p50", s.metrics.q_risk_p50},
                         {"q_risk_p90", s.metrics.q_risk_p90}});
  }
  j["seasonal_naive_by_season"] = by_season;
  return j;
}

std::vector<std::string> baseline_warnings(const ValidationMetrics& metrics,
                                           const BaselineScores& scores) {
  std::vector<std::string> warnings;
  const auto check = [&](const ValidationMetrics& baseline, const std::string& name) {
    if (baseline.windows == 0 || !(metrics.q_risk_p50 >= baseline.q_risk_p50)) return;
    char figures[96];
    std::snprintf(figures, sizeof figures, "%.4f is no better than the %s forecast's %.4f",
                  metrics.q_risk_p50, name.c_str(), baseline.q_risk_p50);
    warnings.push_back("the model's validation q-risk P50 " + std::string(figures) +
                       ": its P50 adds nothing over repeating past values (see "
                       "docs/config.md, data.target_normalizer)");
  };
  check(scores.naive, "naive");
  check(scores.seasonal_naive, "seasonal-naive (m = " + std::to_string(scores.seasonality) + ")");
  return warnings;
}

}  // namespace tft
