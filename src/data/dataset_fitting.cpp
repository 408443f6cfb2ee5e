// DatasetBuilder's fitting steps: categorical encoders and scalers fitted on the training part
// of each series (categorical_encoder.h, scaler.h, target_normalizer.h), or taken from
// transforms fitted before (grown, refitted or extended by new series as FittedTransformsUse
// says), and where each column and series finds its statistics.
#include <cmath>

#include "common/error.h"
#include "data/dataset_builder.h"
#include "data/seasonality.h"
#include "data/target_normalizer.h"

namespace tft {

std::vector<RowRange> DatasetBuilder::training_parts() const {
  std::vector<RowRange> parts;
  for (const SeriesInfo& s : ds_.series_) parts.push_back(RowRange{s.offset, s.train_rows});
  return parts;
}

const CategoricalEncoder& DatasetBuilder::fitted_encoder(const std::string& column) const {
  const auto it = fitted_->encoders.find(column);
  if (it == fitted_->encoders.end()) {
    throw DataError(source_.name() + ": column '" + column +
                    "': the fitted transforms have no encoder for it");
  }
  return it->second;
}

// Time-varying categoricals: fitted on the values of the series' training parts (calendar
// ones on their whole domain), the ids of the column replaced by codes.
void DatasetBuilder::encode_categoricals() {
  const std::vector<RowRange> parts = training_parts();
  for (std::size_t c = 0; c < plan_.categoricals.size(); ++c) {
    const PlannedCategorical& col = plan_.categoricals[c];
    const std::vector<std::string>& values = category_values_[c];
    std::vector<std::int32_t>& column = ds_.categoricals_[c];
    const auto fit_here = [&] {
      return col.source.derived != DerivedFeature::None
                 ? CategoricalEncoder(calendar_domain(col.source.derived))
                 : CategoricalEncoder::fit_on_rows(values, column, parts);
    };
    const CategoricalEncoder encoder = fitted_ == nullptr ? fit_here()
                                       : use_.grow_categories
                                           ? fitted_encoder(col.name).grown_with(fit_here())
                                           : fitted_encoder(col.name);
    encoder.encode_ids(values, column);
    ds_.transforms_.encoders[col.name] = encoder;
    ds_.categorical_names_.push_back(col.name);
  }
}

// Static categoricals: fitted on every series' value.
void DatasetBuilder::encode_static_categoricals() {
  const std::size_t n_cats = plan_.categoricals.size();
  const std::size_t n_sc = plan_.static_categoricals.size();
  ds_.static_categoricals_.resize(static_ids_.size());
  for (std::size_t i = 0; i < n_sc; ++i) {
    const std::string& name = plan_.static_categoricals[i].name;
    const std::vector<std::string>& values = category_values_[n_cats + i];
    const CategoricalEncoder encoder =
        fitted_ == nullptr     ? CategoricalEncoder::fit(values)
        : use_.grow_categories ? fitted_encoder(name).grown_with(CategoricalEncoder::fit(values))
                               : fitted_encoder(name);
    for (std::size_t s = 0; s < ds_.series_.size(); ++s) {
      const std::int32_t id = static_ids_[s * n_sc + i];
      ds_.static_categoricals_[s * n_sc + i] = encoder.encode(values[static_cast<std::size_t>(id)]);
    }
    ds_.transforms_.encoders[name] = encoder;
  }
  std::vector<std::vector<std::string>>().swap(category_values_);
  std::vector<std::int32_t>().swap(static_ids_);
}

void DatasetBuilder::fit_scalers() {
  for (const PlannedReal& r : plan_.reals) ds_.real_names_.push_back(r.name);
  std::vector<std::string> static_names;
  for (const PlannedReal& r : plan_.static_reals) static_names.push_back(r.name);

  ds_.transforms_.target_normalizer = target_normalizer_;
  const bool take_fitted = fitted_ != nullptr && !use_.refit_scalers;
  const bool fit_here = !take_fitted || use_.fit_unseen_series;
  StandardScaler scaler;
  StandardScaler static_scaler;
  if (fit_here) {
    std::vector<std::vector<std::string>> groups;
    for (const SeriesInfo& info : ds_.series_) groups.push_back(info.group_values);
    // The target's statistics are of its transformed values, by the normaliser's method.
    scaler = fit_reals_scaler(data_.scaling, ds_.real_names_, std::move(groups), training_parts(),
                              ds_.reals_, plan_.target_index(data_.target), target_normalizer_);
    static_scaler = fit_static_scaler(data_.scaling, static_names, ds_.static_reals_);
  }
  if (take_fitted) {
    ds_.transforms_.scaler = use_.fit_unseen_series && fitted_->scaler.mode() == data_.scaling
                                 ? with_new_groups(fitted_->scaler, scaler)
                                 : fitted_->scaler;
    ds_.transforms_.static_scaler = fitted_->static_scaler;
  } else {
    ds_.transforms_.scaler = std::move(scaler);
    ds_.transforms_.static_scaler = std::move(static_scaler);
  }
  locate_statistics(static_names);
}

// A count's median is a whole number, and a forecast's median a fraction off it loses to a
// naive forecast wherever the count repeats (BENCHMARKS.md, "Whole-number medians").
// output.median_rounding auto looks for counts where the model learns: every value of the
// target in the training parts is a whole number (data.missing has filled or dropped the
// missing ones by then). A saved model keeps what it was fitted with.
void DatasetBuilder::resolve_median_rounding() {
  bool& whole = ds_.transforms_.whole_number_median;
  if (fitted_ != nullptr) {
    whole = fitted_->whole_number_median;
    return;
  }
  switch (config_.output.median_rounding) {
    case MedianRounding::Whole: whole = true; return;
    case MedianRounding::None: whole = false; return;
    case MedianRounding::Auto: break;
  }
  const std::vector<float>& target = ds_.reals_[plan_.target_index(data_.target)];
  whole = true;
  for (const RowRange& part : training_parts()) {
    for (std::int64_t r = part.offset; r < part.offset + part.rows && whole; ++r) {
      const float value = target[static_cast<std::size_t>(r)];
      whole = std::nearbyint(value) == value;
    }
  }
}

// center auto's provisional choice, made once when a model is fitted (a saved model keeps its
// own), then the season of center seasonal's decoder centers: the saved model's, else
// model.seasonality, else inferred from the time step; it must fit in the encoder, where the
// centers are read. The trainer replaces the provisional choice with the winner of pilot fits
// on the training part (train/center_selection.h); this rule is what stands where no pilot
// can run, and what a dataset loaded on its own gets.
//
// Why the rule chooses so (BENCHMARKS.md, "The target center and conformal calibration"): on
// four public sets, centering each decoder step one season back cut P50 q-risk by 19-45% on
// sub-daily data with a daily cycle and cost 25-32% on daily data with a weekly cycle. Issue
// 39's hourly panel is the counter-example that made the pilot fits the default.
void DatasetBuilder::resolve_target_center() {
  TargetCenter& center = target_normalizer_.center;
  TargetScope& scope = target_normalizer_.scope;
  std::int64_t season = 0;
  std::string source = "model.seasonality";
  if (fitted_ != nullptr) {
    season = fitted_->target_season;
    source = "the saved model's season";
  } else if (config_.model.seasonality > 0) {
    season = config_.model.seasonality;
  } else {
    season = infer_seasonality(ds_, source);
  }
  ds_.known_season_ = season;
  if (center == TargetCenter::Auto) {
    ds_.center_provisional_ = scope != TargetScope::Series;
    if (scope == TargetScope::Series) {
      center = TargetCenter::Statistic;
      ds_.target_center_reason_ = "auto: scope series";
    } else if (!is_sub_daily(ds_)) {
      center = TargetCenter::Last;
      ds_.target_center_reason_ = "auto: the data is not sub-daily";
    } else if (season <= 0 || season > config_.windows.encoder_length) {
      center = TargetCenter::Last;
      ds_.target_center_reason_ =
          season <= 0 ? "auto: no season known (" + source + ")"
                      : "auto: the season (" + source + ", " + std::to_string(season) +
                            " rows) is longer than windows.encoder_length " +
                            std::to_string(config_.windows.encoder_length);
    } else {
      center = TargetCenter::Seasonal;
      ds_.target_center_reason_ =
          "auto: sub-daily data, a season of " + std::to_string(season) + " rows (" + source + ")";
    }
  } else {
    ds_.target_center_reason_ = fitted_ != nullptr ? "the saved model's" : "configured";
  }
  // Scope auto: the encoder's, the one the provisional centers need (a statistic center
  // under scope auto is the encoder window's statistic, as before scope auto existed).
  if (scope == TargetScope::Auto) scope = TargetScope::Encoder;
  if (center != TargetCenter::Seasonal) return;
  if (season <= 0) {
    fail(source_.header_position(),
         "data.target_normalizer.center seasonal needs a season, and none is known (" + source +
             ")");
  }
  if (season > config_.windows.encoder_length) {
    fail(source_.header_position(),
         "data.target_normalizer.center seasonal: the season (" + source + ", " +
             std::to_string(season) + " rows) is longer than windows.encoder_length " +
             std::to_string(config_.windows.encoder_length) +
             ", where the values one season back are read; lengthen the encoder");
  }
  ds_.transforms_.target_season = season;
}

// Where each column and series finds its statistics.
void DatasetBuilder::locate_statistics(const std::vector<std::string>& static_names) {
  const StandardScaler& scaler = ds_.transforms_.scaler;
  for (const std::string& name : ds_.real_names_) {
    const std::optional<std::size_t> c = scaler.column_index(name);
    if (!c && scaler.mode() != ScalingMode::None) {
      throw DataError(source_.name() + ": column '" + name +
                      "': the fitted scaler has no statistics for it");
    }
    ds_.scaler_column_.push_back(c.value_or(0));
  }
  const StandardScaler& static_scaler = ds_.transforms_.static_scaler;
  for (const std::string& name : static_names) {
    const std::optional<std::size_t> c = static_scaler.column_index(name);
    if (!c && static_scaler.mode() != ScalingMode::None) {
      throw DataError(source_.name() + ": column '" + name +
                      "': the fitted static scaler has no statistics for it");
    }
    ds_.static_scaler_column_.push_back(c.value_or(0));
  }
  for (const SeriesInfo& info : ds_.series_) {
    const std::optional<std::size_t> row = scaler.find_group(info.group_values);
    if (!row && scaler.mode() == ScalingMode::PerSeries) {
      fail(info.first_line, "series " + info.label +
                                ": not known to the fitted scaler (per_series scaling "
                                "needs statistics for every series)");
    }
    ds_.scaler_row_.push_back(row.value_or(0));
  }
}

}  // namespace tft
