// Datasets carved from a loaded one: the target center chosen after loading (recenter()), center
// auto's pilot fits on the training part alone (training_holdout(); train/center_selection.h),
// and a backtest's folds (cut_at(), windows_at(); train/backtest.h).
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

TimeSeriesDataset TimeSeriesDataset::cut(const std::vector<std::int64_t>& lengths,
                                         const SplitConfig& split, const WindowConfig& windows,
                                         const TargetNormalizerConfig* normalizer) const {
  TimeSeriesDataset out = *this;
  out.training_windows_.clear();
  out.validation_windows_.clear();
  std::vector<RowRange> parts;
  std::vector<std::vector<std::string>> groups;
  for (std::size_t s = 0; s < out.series_.size(); ++s) {
    SeriesInfo& info = out.series_[s];
    info.length = lengths[s];
    info.train_rows = info.length - validation_rows(info.length, split);
    if (info.train_rows < 1) info.train_rows = info.length;  // too short to hold anything out
    parts.push_back(RowRange{info.offset, info.train_rows});
    groups.push_back(info.group_values);
    append_series_windows(static_cast<std::uint32_t>(s), info.length, info.train_rows, windows,
                          out.training_windows_, out.validation_windows_);
  }
  if (normalizer != nullptr) {
    // Refitted on the shortened training parts, so the rows cut off shape no statistic.
    out.transforms_.scaler =
        fit_reals_scaler(transforms_.scaler.mode(), real_names_, std::move(groups), parts, reals_,
                         static_cast<std::size_t>(target_index_), *normalizer);
  }
  return out;
}

std::optional<TimeSeriesDataset> TimeSeriesDataset::training_holdout(
    const TrainConfig& config, const TargetChoice& choice, std::size_t max_training_windows,
    std::size_t max_validation_windows) const {
  SplitConfig split = config.split;
  const bool has_split = (split.validation_steps && *split.validation_steps > 0) ||
                         (split.validation_fraction && *split.validation_fraction > 0.0);
  if (!has_split) split = SplitConfig{0.2, std::nullopt};
  std::vector<std::int64_t> lengths;
  for (const SeriesInfo& info : series_) lengths.push_back(info.train_rows);
  TargetNormalizerConfig normalizer = transforms_.target_normalizer;
  normalizer.scope = choice.scope;
  normalizer.center = choice.center;
  TimeSeriesDataset pilot = cut(lengths, split, config.windows, &normalizer);
  if (pilot.training_windows_.empty() || pilot.validation_windows_.empty()) return std::nullopt;
  thin_evenly(pilot.training_windows_, max_training_windows);
  thin_evenly(pilot.validation_windows_, max_validation_windows);
  pilot.recenter(choice, "pilot");
  // Pilots compare the models' own medians: rounding, applied alike to every candidate after
  // the choice, would only hide how far apart they are.
  pilot.transforms_.whole_number_median = false;
  return pilot;
}

TimeSeriesDataset TimeSeriesDataset::cut_at(const TrainConfig& config,
                                            const std::vector<std::int64_t>& rows,
                                            const StandardScaler* kept) const {
  if (rows.size() != series_.size()) {
    throw DataError("cut_at: " + std::to_string(rows.size()) + " cuts for " +
                    std::to_string(series_.size()) + " series");
  }
  for (std::size_t s = 0; s < series_.size(); ++s) {
    if (rows[s] < 0 || rows[s] > series_[s].length) {
      throw DataError("cut_at: series " + series_[s].label + " has " +
                      std::to_string(series_[s].length) + " rows, not " + std::to_string(rows[s]));
    }
  }
  TimeSeriesDataset out = cut(rows, config.split, config.windows,
                              kept != nullptr ? nullptr : &transforms_.target_normalizer);
  if (kept != nullptr) out.transforms_.scaler = *kept;
  return out;
}

TimeSeriesDataset TimeSeriesDataset::windows_at(
    const std::vector<std::int64_t>& origins, const std::vector<std::int64_t>& full_lengths) const {
  TimeSeriesDataset out = *this;
  out.training_windows_.clear();
  out.validation_windows_.clear();
  for (std::size_t s = 0; s < out.series_.size(); ++s) {
    SeriesInfo& info = out.series_[s];
    const std::int64_t start = origins[s] - encoder_length_;
    if (start < 0 || origins[s] + prediction_length_ > full_lengths[s]) continue;
    info.length = origins[s] + prediction_length_;
    info.train_rows = origins[s];
    out.validation_windows_.push_back(
        Window{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(start)});
  }
  return out;
}

}  // namespace tft
