// data.target_normalizer.center auto, decided by evidence: a short pilot fit of the model for
// each candidate normalisation on the training part alone, scored on a time-ordered holdout
// carved from its end (TimeSeriesDataset::training_holdout), the lowest P50 q-risk winning.
//
// Candidates: last, and seasonal at every season that fits in the encoder (model.seasonality
// or the inferred one, and for sub-daily data also the day and the week: candidate_seasons),
// all with scope encoder; under scope auto also statistic with scope series (per-series
// standardisation, as pytorch-forecasting's GroupNormalizer). Issue 39 is why: on an hourly panel
// the time-step rule chose seasonal and lost 23% to per-series standardisation.
#pragma once

#include "config/train_config.h"
#include "data/time_series_dataset.h"

namespace tft {

// What the pilots cost: each trains on at most kPilotTrainingWindows of the holdout dataset's
// training windows (thinned evenly) for as many epochs as make kPilotSteps optimizer steps at
// the config's batch size (at least one, at most training.epochs; the config's early stopping
// and schedule), and is scored on at most kPilotValidationWindows windows. Steps, not epochs:
// a small set's epoch is a few steps, and a pilot that has barely moved from its untrained
// output ranks the centers by the forecasts they start from, not by what a model learns.
inline constexpr std::size_t kPilotTrainingWindows = 2048;
inline constexpr std::size_t kPilotValidationWindows = 1024;
inline constexpr std::int64_t kPilotSteps = 128;

// When `dataset`'s center is provisional (center auto, no saved model's choice): runs the
// pilots and recenters `dataset` on the winner, its reason naming every candidate's score
// and the pilots' time. Where no pilot can run (one candidate, no holdout window, a job of
// several ranks, no 0.5 or 0.9 quantile to score), the provisional choice stays and the
// reason says why. `config` is validated; the pilots train on its device and threads.
void choose_target_center(const TrainConfig& config, TimeSeriesDataset& dataset);

}  // namespace tft
