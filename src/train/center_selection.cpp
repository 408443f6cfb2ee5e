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

bool same_option(const TargetChoice& a, const TargetChoice& b) {
  return a.center == b.center && a.scope == b.scope && a.season == b.season;
}

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

// The pilot's training settings: the config's model, optimiser and schedule, the epochs that make
// `steps` steps (at least one, at most the config's), no checkpointing (memory is not what is
// compared), no QAT, no calibration.
TrainConfig pilot_config(const TrainConfig& config, const TargetChoice& c,
                         std::size_t training_windows, std::int64_t steps) {
  TrainConfig pilot = config;
  pilot.data.target_normalizer.scope = c.scope;
  pilot.data.target_normalizer.center = c.center;
  const auto batch = static_cast<std::size_t>(config.training.batch_size);
  const auto steps_per_epoch = static_cast<std::int64_t>((training_windows + batch - 1) / batch);
  pilot.training.epochs = std::clamp<std::int64_t>((steps + steps_per_epoch - 1) / steps_per_epoch,
                                                   1, config.training.epochs);
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

// The options of one family and their scores.
std::pair<std::vector<TargetChoice>, std::vector<double>> family_of(
    TargetCenter family, const std::vector<TargetChoice>& options,
    const std::vector<double>& scores) {
  std::pair<std::vector<TargetChoice>, std::vector<double>> members;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (options[i].center == family) {
      members.first.push_back(options[i]);
      members.second.push_back(scores[i]);
    }
  }
  return members;
}

std::vector<TargetChoice> contenders_for_longer_pilots(const std::vector<TargetChoice>& options,
                                                       const std::vector<double>& first_scores) {
  if (first_scores.size() != options.size()) {
    throw std::invalid_argument("contenders_for_longer_pilots: one pilot score per option");
  }
  double best = std::numeric_limits<double>::infinity();
  for (const double s : first_scores) {
    if (std::isfinite(s)) best = std::min(best, s);
  }
  std::vector<TargetChoice> contenders;
  for (const TargetCenter family :
       {TargetCenter::Last, TargetCenter::Seasonal, TargetCenter::Statistic}) {
    const auto [members, scores] = family_of(family, options, first_scores);
    std::optional<std::size_t> own;  // the family's best finite pilot
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (std::isfinite(scores[i]) && (!own || scores[i] < scores[*own])) own = i;
    }
    if (own && scores[*own] <= best * (1.0 + kLongerPilotMargin)) {
      contenders.push_back(members[*own]);
    }
  }
  if (contenders.size() < 2) contenders.clear();
  return contenders;
}

std::optional<TargetChoice> choose_after_longer_pilots(const std::vector<TargetChoice>& options,
                                                       const std::vector<double>& first_scores,
                                                       const std::vector<TargetChoice>& contenders,
                                                       const std::vector<double>& longer_scores,
                                                       const std::vector<SeasonEvidence>& seasons) {
  if (first_scores.size() != options.size() || longer_scores.size() != contenders.size()) {
    throw std::invalid_argument("choose_after_longer_pilots: one pilot score per option");
  }
  const std::optional<TargetChoice> family = choose_by_evidence(contenders, longer_scores, {});
  if (!family) return std::nullopt;
  const auto [members, scores] = family_of(family->center, options, first_scores);
  return choose_by_evidence(members, scores, seasons);
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
  std::int64_t holdout_windows = 0;
  // One pilot's score (NaN: it diverged): the option trained for `steps` steps on at most
  // `windows` windows. `same_as`, when given, is an earlier pilot of the option (its epochs and
  // training windows, and its score): one that this would repeat exactly is not run again.
  struct Pilot {
    bool held_out = false;  // false: the training part is too short to hold a window out
    double score = std::numeric_limits<double>::quiet_NaN();
    std::int64_t epochs = 0;
    std::size_t training_windows = 0;
  };
  const auto run_pilot = [&](const TargetChoice& c, std::int64_t steps, std::size_t windows,
                             const Pilot* same_as) {
    Pilot p;
    std::optional<TimeSeriesDataset> holdout =
        dataset.training_holdout(config, c, windows, kPilotValidationWindows);
    if (!holdout) return p;
    p.held_out = true;
    holdout_windows = static_cast<std::int64_t>(holdout->validation_windows().size());
    p.training_windows = holdout->training_windows().size();
    const TrainConfig pilot_settings = pilot_config(config, c, p.training_windows, steps);
    p.epochs = pilot_settings.training.epochs;
    if (same_as && same_as->epochs == p.epochs && same_as->training_windows == p.training_windows) {
      p.score = same_as->score;  // the same windows and epochs: the same pilot, bit for bit
      return p;
    }
    Trainer pilot(pilot_settings, std::move(*holdout));
    pilot.write_no_files();
    try {
      p.score = score_of(pilot.train().validation, has_p50);
    } catch (const NumericalError&) {
      // A candidate whose pilot diverges loses; the others decide.
    }
    return p;
  };
  const auto score_list = [](const std::vector<TargetChoice>& choices,
                             const std::vector<double>& scores) {
    std::string text;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      text += (text.empty() ? "" : ", ") + candidate_name(choices[i]) + " " +
              (std::isfinite(scores[i]) ? fixed_text(scores[i], 4) : std::string("diverged"));
    }
    return text;
  };

  std::vector<Pilot> first(options.size());
  std::vector<double> pilot_scores(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    first[i] = run_pilot(options[i], kPilotSteps, kPilotTrainingWindows, nullptr);
    if (!first[i].held_out)
      return keep("the training part is too short to hold out a pilot window");
    pilot_scores[i] = first[i].score;
  }
  std::string scores = score_list(options, pilot_scores);

  std::vector<SeasonEvidence> seasons;
  const auto is_seasonal = [](const TargetChoice& c) { return c.center == TargetCenter::Seasonal; };
  if (std::count_if(options.begin(), options.end(), is_seasonal) > 1) {
    for (const SeasonalNaiveScore& n : seasonal_naive_on_training_part(config, dataset)) {
      seasons.push_back({n.seasonality, score_of(n.metrics, has_p50)});
    }
  }
  // Close families run again, longer; their scores pick the family (the first round's when every
  // longer pilot diverged).
  std::optional<TargetChoice> choice;
  std::vector<TargetChoice> deciding = options;
  std::vector<double> deciding_scores = pilot_scores;
  const std::vector<TargetChoice> contenders = contenders_for_longer_pilots(options, pilot_scores);
  if (!contenders.empty()) {
    std::vector<double> longer;
    for (const TargetChoice& c : contenders) {
      const auto same = [&](const TargetChoice& o) { return same_option(o, c); };
      const auto i = static_cast<std::size_t>(std::find_if(options.begin(), options.end(), same) -
                                              options.begin());
      longer.push_back(
          run_pilot(c, kLongerPilotSteps, kLongerPilotTrainingWindows, &first[i]).score);
    }
    scores += "; within " + fixed_text(100 * kLongerPilotMargin, 0) + "% of the best, up to " +
              std::to_string(kLongerPilotSteps) + " steps: " + score_list(contenders, longer);
    choice = choose_after_longer_pilots(options, pilot_scores, contenders, longer, seasons);
    if (choice) {
      deciding = contenders;
      deciding_scores = longer;
    }
  }
  if (!choice) choice = choose_by_evidence(options, pilot_scores, seasons);
  if (!choice) return keep("every pilot fit diverged (" + scores + ")");
  std::string won = candidate_name(*choice) + " won";
  if (choice->center == TargetCenter::Statistic) {
    // Won on a tie when another pilot scored lower (a diverged pilot's NaN compares false).
    double statistic_score = 0.0;
    for (std::size_t i = 0; i < deciding.size(); ++i) {
      if (deciding[i].center == TargetCenter::Statistic) statistic_score = deciding_scores[i];
    }
    if (std::any_of(deciding_scores.begin(), deciding_scores.end(),
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
