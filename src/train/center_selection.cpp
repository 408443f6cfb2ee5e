#include "train/center_selection.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/format.h"
#include "data/seasonality.h"
#include "data/window_sampler.h"
#include "distributed/launch_env.h"
#include "report/baselines.h"
#include "report/metrics.h"
#include "train/trainer.h"

namespace tft {

namespace {

std::string candidate_name(const TargetChoice& c) {
  std::string name = to_string(c.center);
  if (c.center == TargetCenter::Seasonal) name += " (" + std::to_string(c.season) + " rows)";
  if (c.scope == TargetScope::Series) name += " (scope series)";
  return name;
}

// last; seasonal at every season that fits in the encoder (the known one, and the day and
// the week of sub-daily data: candidate_seasons); statistic per series under scope auto.
std::vector<TargetChoice> candidates(const TrainConfig& config, const TimeSeriesDataset& dataset) {
  std::vector<TargetChoice> out{{TargetScope::Encoder, TargetCenter::Last, 0}};
  for (const std::int64_t m :
       candidate_seasons(dataset, dataset.known_season(), config.windows.encoder_length)) {
    out.push_back({TargetScope::Encoder, TargetCenter::Seasonal, m});
  }
  if (config.data.target_normalizer.scope == TargetScope::Auto) {
    out.push_back({TargetScope::Series, TargetCenter::Statistic, 0});
  }
  return out;
}

// The pilot's training settings: the config's model, optimiser and schedule, fewer epochs,
// no checkpointing (memory is not what is compared), no QAT, no calibration.
TrainConfig pilot_config(const TrainConfig& config, const TargetChoice& c,
                         std::size_t training_windows) {
  TrainConfig pilot = config;
  pilot.data.target_normalizer.scope = c.scope;
  pilot.data.target_normalizer.center = c.center;
  const auto batch = static_cast<std::size_t>(config.training.batch_size);
  const auto steps_per_epoch = static_cast<std::int64_t>((training_windows + batch - 1) / batch);
  pilot.training.epochs = std::clamp<std::int64_t>(
      (kPilotSteps + steps_per_epoch - 1) / steps_per_epoch, 1, config.training.epochs);
  pilot.training.snapshot_every_steps = 0;
  pilot.training.qat = QatConfig{};
  pilot.checkpoint = CheckpointConfig{};
  pilot.output.calibration = CalibrationMethod::None;
  return pilot;
}

// P50 q-risk, or P90 where the quantiles have no 0.5.
double score_of(const ValidationMetrics& v, bool has_p50) {
  return has_p50 ? v.q_risk_p50 : v.q_risk_p90;
}

// The seasonal naive at every candidate season over the training part's windows (at most
// kSeasonEvidenceWindows, thinned evenly): the evidence that picks the season.
std::vector<SeasonalNaiveScore> seasonal_naive_on_training_part(const TrainConfig& config,
                                                                const TimeSeriesDataset& dataset) {
  std::vector<Window> windows = dataset.training_windows();
  thin_evenly(windows, kSeasonEvidenceWindows);
  return score_baselines(dataset, windows, config.model.quantiles, dataset.known_season())
      .seasonal_naive_by_season;
}

// Pilot trainers would join the job's collectives; its ranks keep the time-step rule instead.
bool in_a_job() {
  const std::optional<distributed::LaunchEnv> env = distributed::launch_env_from_environment();
  return env && env->world_size > 1;
}

}  // namespace

std::optional<TargetChoice> choose_by_evidence(const std::vector<TargetChoice>& options,
                                               const std::vector<double>& pilot_scores,
                                               const std::vector<SeasonEvidence>& seasons) {
  if (pilot_scores.size() != options.size()) {
    throw std::invalid_argument("choose_by_evidence: one pilot score per option");
  }
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (std::isfinite(pilot_scores[i]) && (!best || pilot_scores[i] < pilot_scores[*best]))
      best = i;
  }
  if (!best) return std::nullopt;
  // A tie goes to statistic per series.
  for (std::size_t i = 0; i < options.size(); ++i) {
    const bool statistic = options[i].center == TargetCenter::Statistic;
    if (statistic && std::isfinite(pilot_scores[i]) &&
        pilot_scores[i] <= pilot_scores[*best] * (1.0 + kPilotTieFraction)) {
      best = i;
    }
  }
  TargetChoice choice = options[*best];
  if (choice.center != TargetCenter::Seasonal) return choice;
  // Among the seasons whose pilot finished, the one with the best seasonal naive.
  double best_naive = std::numeric_limits<double>::infinity();
  for (const SeasonEvidence& e : seasons) {
    bool finished = false;
    for (std::size_t i = 0; i < options.size(); ++i) {
      finished = finished || (options[i].center == TargetCenter::Seasonal &&
                              options[i].season == e.season && std::isfinite(pilot_scores[i]));
    }
    if (finished && e.naive_score < best_naive) {
      best_naive = e.naive_score;
      choice.season = e.season;
    }
  }
  return choice;
}

void choose_target_center(const TrainConfig& config, TimeSeriesDataset& dataset) {
  if (!dataset.target_center_is_provisional()) return;
  const std::vector<TargetChoice> options = candidates(config, dataset);
  const std::string provisional = dataset.target_center_reason();
  const auto keep = [&](const std::string& why) {
    const TargetNormalizerConfig n = dataset.transforms().target_normalizer;
    dataset.recenter({n.scope, n.center, dataset.transforms().target_season},
                     provisional + "; " + why);
  };
  if (options.size() < 2) return keep("no other candidate");
  if (in_a_job()) return keep("no pilot fits in a job of several ranks");
  const std::vector<double>& quantiles = config.model.quantiles;
  const bool has_p50 = quantile_index(quantiles, 0.5).has_value();
  if (!has_p50 && !quantile_index(quantiles, 0.9)) {
    return keep("no 0.5 or 0.9 quantile to score pilot fits by");
  }

  const auto start = std::chrono::steady_clock::now();
  std::string scores;
  std::vector<double> pilot_scores;
  std::int64_t holdout_windows = 0;
  for (const TargetChoice& c : options) {
    std::optional<TimeSeriesDataset> holdout =
        dataset.training_holdout(config, c, kPilotTrainingWindows, kPilotValidationWindows);
    if (!holdout) return keep("the training part is too short to hold out a pilot window");
    holdout_windows = static_cast<std::int64_t>(holdout->validation_windows().size());
    const std::size_t training_windows = holdout->training_windows().size();
    Trainer pilot(pilot_config(config, c, training_windows), std::move(*holdout));
    pilot.write_no_files();
    double score = std::numeric_limits<double>::quiet_NaN();
    try {
      score = score_of(pilot.train().validation, has_p50);
    } catch (const NumericalError&) {
      // A candidate whose pilot diverges loses; the others decide.
    }
    pilot_scores.push_back(score);
    scores += (scores.empty() ? "" : ", ") + candidate_name(c) + " " +
              (std::isfinite(score) ? fixed_text(score, 4) : std::string("diverged"));
  }

  std::vector<SeasonEvidence> seasons;
  const auto is_seasonal = [](const TargetChoice& c) { return c.center == TargetCenter::Seasonal; };
  if (std::count_if(options.begin(), options.end(), is_seasonal) > 1) {
    for (const SeasonalNaiveScore& n : seasonal_naive_on_training_part(config, dataset)) {
      seasons.push_back({n.seasonality, score_of(n.metrics, has_p50)});
    }
  }
  const std::optional<TargetChoice> choice = choose_by_evidence(options, pilot_scores, seasons);
  if (!choice) return keep("every pilot fit diverged (" + scores + ")");
  std::string won = candidate_name(*choice) + " won";
  if (choice->center == TargetCenter::Statistic) {
    // Won on a tie when another pilot scored lower (a diverged pilot's NaN compares false).
    double statistic_score = 0.0;
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (options[i].center == TargetCenter::Statistic) statistic_score = pilot_scores[i];
    }
    if (std::any_of(pilot_scores.begin(), pilot_scores.end(),
                    [&](double s) { return s < statistic_score; })) {
      won = "within " + fixed_text(100 * kPilotTieFraction, 0) + "% of the best, a tie: " + won;
    }
  }
  if (choice->center == TargetCenter::Seasonal && !seasons.empty()) {
    std::string naive_scores;
    for (const SeasonEvidence& e : seasons) {
      naive_scores += (naive_scores.empty() ? "" : ", ") + std::to_string(e.season) + " rows " +
                      (std::isfinite(e.naive_score) ? fixed_text(e.naive_score, 4) : "n/a");
    }
    won = "seasonal by the pilots, its season by the seasonal naive over the training part (" +
          naive_scores + "): " + won;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  dataset.recenter(*choice, "auto: pilot fits on the training part's last rows (" +
                                std::to_string(holdout_windows) + " windows), " +
                                (has_p50 ? "P50" : "P90") + " q-risk " + scores + "; " + won +
                                " (" + fixed_text(seconds, 1) + " s)");
}

}  // namespace tft
