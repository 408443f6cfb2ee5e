// Forecasts that need no model, scored exactly like the model (metrics.h) on the same
// validation windows, so every run shows whether the model adds anything:
//   naive           every horizon step repeats the target's last encoder value
//   seasonal naive  horizon step h repeats the value one season before it: the row
//                   m * ceil((h + 1) / m) rows earlier, m the seasonality in rows
// A point forecast stands for every quantile, so its P90 q-risk is that of a forecast with no
// spread (for the model's P90 to beat it, its upper quantile has to be worth something) and its
// interval coverage is the share of targets equal to it.
//
// The seasonality is model.seasonality when set, else inferred from the first series' time
// step (infer_seasonality, data/seasonality.h): 24 for hourly data, 7 for daily, 5 for
// business-daily; nothing for other steps or integer times. Sub-daily data is also scored at
// the day and the week in rows (24 and 168 for hourly data; candidate_seasons), and the best
// of these by P50 q-risk is the seasonal naive a run reports and has to beat. Only the encoder
// is looked at, so a season is scored only when m <= encoder_length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/seasonality.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"
#include "report/metrics.h"

namespace tft {

// The seasonal naive forecast at one season of m rows.
struct SeasonalNaiveScore {
  std::int64_t seasonality = 0;
  ValidationMetrics metrics;
};

struct BaselineScores {
  ValidationMetrics naive;  // windows == 0: no validation windows
  // The best seasonal naive's rows per season; 0: none scored.
  std::int64_t seasonality = 0;
  // Where the seasonality came from ("model.seasonality", "hourly data", ...), with "the best
  // of m = 24, 168" when several were scored, or why the seasonal naive was not scored.
  std::string seasonality_source;
  ValidationMetrics seasonal_naive;  // the best; windows == 0: not scored (seasonality_source)
  // Every season scored, ascending (the best among them).
  std::vector<SeasonalNaiveScore> seasonal_naive_by_season;
};

// Both baselines over `windows`. configured_seasonality: model.seasonality (0: infer).
BaselineScores score_baselines(const TimeSeriesDataset& dataset, const std::vector<Window>& windows,
                               const std::vector<double>& quantiles,
                               std::int64_t configured_seasonality);

// {"naive": {validation metrics}, "seasonal_naive": {...} or null, "seasonality": m,
//  "seasonality_source": "...", "seasonal_naive_by_season": [{"seasonality": m,
//  "q_risk_p50": ..., "q_risk_p90": ...}, ...]}
nlohmann::ordered_json baseline_scores_to_json(const BaselineScores& scores);

// A warning for each baseline whose P50 q-risk is at or below the model's `metrics` (empty
// when the model beats both, or when either side has no P50).
std::vector<std::string> baseline_warnings(const ValidationMetrics& metrics,
                                           const BaselineScores& scores);

}  // namespace tft
