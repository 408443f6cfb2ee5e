// data.target_normalizer.center auto, decided by evidence from the training part alone:
//  - the family (last, seasonal, statistic) by a short pilot fit of the model for each candidate
//    normalisation, scored on a time-ordered holdout carved from the training part's end
//    (TimeSeriesDataset::training_holdout), the lowest P50 q-risk winning; the seasonal family
//    is scored by its best season's pilot; when other families come close, a longer pilot of
//    each close family decides (kLongerPilotSteps);
//  - the season, when seasonal wins, by the seasonal naive's P50 q-risk over the training part's
//    windows. Why not by the pilots: on all four hourly and half-hourly sets of BENCHMARKS.md the
//    pilots preferred the day while the full runs did better with the week, as the seasonal naive
//    over the training part did on every one of them. A holdout of a few weeks holds one or two
//    weekly cycles, and a pilot of 128 steps does not learn what a week-old level is worth; the
//    naive sees every window of the training part.
//
// Candidates: last, and seasonal at every season that fits in the encoder (model.seasonality
// or the inferred one, and for sub-daily data also the day and the week: candidate_seasons),
// all with scope encoder; under scope auto also statistic with scope series (per-series
// standardisation, as pytorch-forecasting's GroupNormalizer). Issue 39 is why: on an hourly panel
// the time-step rule chose seasonal and lost 23% to per-series standardisation.
// Not a candidate: statistic with scope encoder (the peer's EncoderNormalizer). Tried as one
// (BENCHMARKS.md, "The encoder's statistic as a candidate"), its pilot lost to per-series' on
// every pizza_types seed, where its full runs win by 1.6%, and beat seasonal on a taylor seed,
// where its full run is 59% worse than the week's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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
// Pilot scores within this fraction of the best are a tie: a pilot scored on a few dozen holdout
// windows cannot tell them apart, and a tie goes to statistic per series (pytorch-forecasting's
// GroupNormalizer, the usual normalisation). Seen on elec_daily, seed 7: last 0.0316 against
// statistic 0.0317 flipped with a change of rounding, and the full runs scored 0.0525 against
// 0.0445.
inline constexpr double kPilotTieFraction = 0.01;
// The seasonal naive that picks the season is scored on at most this many training windows.
inline constexpr std::size_t kSeasonEvidenceWindows = 8192;
// A second, longer round of pilots for the families whose first pilot came within
// kLongerPilotMargin of the best, when more than one did: kLongerPilotSteps steps on at most
// kLongerPilotTrainingWindows windows each; their scores decide. Why: a first pilot ranks the
// centers by how close their forecasts start, and the seasonal one starts at the seasonal naive.
// On examples/configs/multiseries.yaml (daily, promotions and prices known) it led every first
// pilot by up to 12% (seeds 2, 3: 0.107 against statistic's 0.118 and 0.121) while full runs
// with it were 54% worse (0.094 against 0.061); the others overtake it after about 160 steps,
// and at 384 steps on every window the pilots rank the three as the full runs do
// (BENCHMARKS.md, "Longer pilots for close first rounds"). The margin is twice the largest
// deficit seen overcome.
inline constexpr double kLongerPilotMargin = 0.25;
inline constexpr std::int64_t kLongerPilotSteps = 384;
inline constexpr std::size_t kLongerPilotTrainingWindows = 8192;

// When `dataset`'s center is provisional (center auto, no saved model's choice): runs the
// pilots and recenters `dataset` on the winner, its reason naming every candidate's score
// and the pilots' time. Where no pilot can run (one candidate, no holdout window, a job of
// several ranks, no 0.5 or 0.9 quantile to score), the provisional choice stays and the
// reason says why. `config` is validated; the pilots train on its device and threads.
void choose_target_center(const TrainConfig& config, TimeSeriesDataset& dataset);

// The seasonal naive's score (P50 q-risk, or P90) at one candidate season over the training part.
struct SeasonEvidence {
  std::int64_t season = 0;
  double naive_score = 0.0;  // NaN: not scorable
};

// The rule apart from the fits, given each option's pilot score (NaN: diverged) and the seasonal
// naive at each season: the option with the best finite pilot score (statistic on a tie within
// kPilotTieFraction); when it is seasonal, the
// season among those whose pilot finished with the best finite naive score (the pilot's own
// season when none has one). nullopt when every pilot diverged.
std::optional<TargetChoice> choose_by_evidence(const std::vector<TargetChoice>& options,
                                               const std::vector<double>& pilot_scores,
                                               const std::vector<SeasonEvidence>& seasons);

// Who runs the longer pilots, given the first round's scores: one option per family (last,
// seasonal, statistic) whose best finite first score is within kLongerPilotMargin of the best,
// each family's best first pilot (for seasonal the season its pilots preferred, which is what
// the first round compared). Empty when fewer than two families qualify: the first round decides.
std::vector<TargetChoice> contenders_for_longer_pilots(const std::vector<TargetChoice>& options,
                                                       const std::vector<double>& first_scores);

// The choice after the longer round: the family by the contenders' longer scores (as
// choose_by_evidence ranks them, ties to statistic), then within that family by the first
// round (choose_by_evidence over its options: for seasonal the naive's season among the seasons
// whose first pilot finished). nullopt when every longer pilot diverged.
std::optional<TargetChoice> choose_after_longer_pilots(const std::vector<TargetChoice>& options,
                                                       const std::vector<double>& first_scores,
                                                       const std::vector<TargetChoice>& contenders,
                                                       const std::vector<double>& longer_scores,
                                                       const std::vector<SeasonEvidence>& seasons);

}  // namespace tft
