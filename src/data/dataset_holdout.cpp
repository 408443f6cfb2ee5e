// The target center chosen after loading: recenter(), and the datasets of center auto's pilot
// fits, carved from the training part alone (training_holdout(); train/center_selection.h).
#include <utility>

#include "common/error.h"
#include "data/target_normalizer.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"

namespace tft {

void TimeSeriesDataset::recenter(const TargetChoice& choice, std::string reason) {
  if (choice.scope == TargetScope::Auto || choice.center == TargetCenter::Auto) {
    throw ConfigError("recenter: the scope and center must be resolved (not auto)");
  }
  if (choice.center != TargetCenter::Statistic && choice.scope == TargetScope::Series) {
    throw ConfigError(std::string("recenter: center ") + to_string(choice.center) +
                      " needs scope encoder");
  }
  const bool seasonal = choice.center == TargetCenter::Seasonal;
  if (seasonal && (choice.season <= 0 || choice.season > encoder_length_)) {
    throw ConfigError("recenter: center seasonal needs a season within the encoder (season " +
                      std::to_string(choice.season) + ", encoder " +
                      std::to_string(encoder_length_) + ")");
  }
  transforms_.target_normalizer.scope = choice.scope;
  transforms_.target_normalizer.center = choice.center;
  transforms_.target_season = seasonal ? choice.season : 0;
  target_center_reason_ = std::move(reason);
  center_provisional_ = false;
}

std::optional<TimeSeriesDataset> TimeSeriesDataset::training_holdout(
    const TrainConfig& config, const TargetChoice& choice, std::size_t max_training_windows,
    std::size_t max_validation_windows) const {
  SplitConfig split = config.split;
  const bool has_split = (split.validation_steps && *split.validation_steps > 0) ||
                         (split.validation_fraction && *split.validation_fraction > 0.0);
  if (!has_split) split = SplitConfig{0.2, std::nullopt};
  TimeSeriesDataset pilot = *this;
  pilot.training_windows_.clear();
  pilot.validation_windows_.clear();
  std::vector<RowRange> parts;
  std::vector<std::vector<std::string>> groups;
  for (std::size_t s = 0; s < pilot.series_.size(); ++s) {
    SeriesInfo& info = pilot.series_[s];
    info.length = info.train_rows;
    info.train_rows = info.length - validation_rows(info.length, split);
    if (info.train_rows < 1) info.train_rows = info.length;  // too short to hold anything out
    parts.push_back(RowRange{info.offset, info.train_rows});
    groups.push_back(info.group_values);
    append_series_windows(static_cast<std::uint32_t>(s), info.length, info.train_rows,
                          config.windows, pilot.training_windows_, pilot.validation_windows_);
  }
  if (pilot.training_windows_.empty() || pilot.validation_windows_.empty()) return std::nullopt;
  thin_evenly(pilot.training_windows_, max_training_windows);
  thin_evenly(pilot.validation_windows_, max_validation_windows);
  // Refitted on the shortened training parts, so the held-out rows shape no statistic.
  TargetNormalizerConfig normalizer = transforms_.target_normalizer;
  normalizer.scope = choice.scope;
  normalizer.center = choice.center;
  pilot.transforms_.scaler =
      fit_reals_scaler(transforms_.scaler.mode(), real_names_, std::move(groups), parts, reals_,
                       static_cast<std::size_t>(target_index_), normalizer);
  pilot.recenter(choice, "pilot");
  return pilot;
}

}  // namespace tft
