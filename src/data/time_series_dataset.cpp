#include "data/time_series_dataset.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/format.h"
#include "data/dataset_builder.h"
#include "data/seasonality.h"
#include "data/target_normalizer.h"
#include "readers/data_file.h"
#include "readers/iso8601.h"
#include "readers/load_errors.h"

namespace tft {

// ---------------------------------------------------------------------------------------
// DataTransforms

nlohmann::json DataTransforms::to_json() const {
  nlohmann::json encoders_json = nlohmann::json::object();
  for (const auto& [name, encoder] : encoders) encoders_json[name] = encoder.to_json();
  return nlohmann::json{{"format", "tftrain-data-transforms"},
                        {"version", 2},
                        {"target_normalizer", target_normalizer_to_json(target_normalizer)},
                        {"target_season", target_season},
                        {"whole_number_median", whole_number_median},
                        {"scaler", scaler.to_json()},
                        {"static_scaler", static_scaler.to_json()},
                        {"encoders", encoders_json}};
}

DataTransforms DataTransforms::from_json(const nlohmann::json& json) {
  if (!json.is_object() || json.value("format", std::string()) != "tftrain-data-transforms") {
    throw DataError(
        "data transforms: expected an object with \"format\": \"tftrain-data-transforms\"");
  }
  // Version 1 predates data.target_normalizer: its target was scaled like the other reals.
  const bool version_1 = json.contains("version") && json["version"] == 1;
  if (!version_1 && !(json.contains("version") && json["version"] == 2)) {
    throw DataError("data transforms: unsupported version " +
                    (json.contains("version") ? json["version"].dump() : std::string("(none)")) +
                    " (expected 1 or 2)");
  }
  if (!version_1 && !json.contains("target_normalizer")) {
    throw DataError("data transforms: expected key \"target_normalizer\"");
  }
  if (!json.contains("scaler") || !json.contains("static_scaler") || !json.contains("encoders") ||
      !json["encoders"].is_object()) {
    throw DataError("data transforms: expected keys \"scaler\", \"static_scaler\", \"encoders\"");
  }
  DataTransforms t;
  t.target_normalizer =
      version_1 ? TargetNormalizerConfig{TargetScope::Series, TargetCenter::Statistic,
                                         TargetMethod::Standard, TargetTransformation::None}
                : target_normalizer_from_json(json["target_normalizer"]);
  if (json.contains("target_season")) {
    const nlohmann::json& season = json["target_season"];
    if (!season.is_number_integer() || season.get<std::int64_t>() < 0) {
      throw DataError("data transforms: target_season: expected a non-negative integer, got " +
                      season.dump());
    }
    t.target_season = season.get<std::int64_t>();
  }
  if ((t.target_season > 0) != (t.target_normalizer.center == TargetCenter::Seasonal)) {
    throw DataError("data transforms: target_season " + std::to_string(t.target_season) +
                    " does not fit target_normalizer.center " +
                    to_string(t.target_normalizer.center) +
                    " (a season for center seasonal, and only for it)");
  }
  if (json.contains("whole_number_median")) {
    const nlohmann::json& whole = json["whole_number_median"];
    if (!whole.is_boolean()) {
      throw DataError("data transforms: whole_number_median: expected true or false, got " +
                      whole.dump());
    }
    t.whole_number_median = whole.get<bool>();
  }
  t.scaler = StandardScaler::from_json(json["scaler"]);
  t.static_scaler = StandardScaler::from_json(json["static_scaler"]);
  for (auto it = json["encoders"].begin(); it != json["encoders"].end(); ++it) {
    t.encoders.emplace(it.key(), CategoricalEncoder::from_json(it.value()));
  }
  return t;
}

bool operator==(const DataTransforms& a, const DataTransforms& b) {
  return a.target_normalizer == b.target_normalizer && a.target_season == b.target_season &&
         a.whole_number_median == b.whole_number_median && a.scaler == b.scaler &&
         a.static_scaler == b.static_scaler && a.encoders == b.encoders;
}

// ---------------------------------------------------------------------------------------
// TimeSeriesDataset

namespace {

// A stored real at a row as a sample holds it: the target normalised with the window's
// normalisation, the others scaled with the series' statistics.
struct ScaledReals {
  const TimeSeriesDataset& dataset;
  const std::vector<std::vector<float>>& reals;
  const std::vector<ScalerStats>& stats;  // per stored real
  const ScalerStats& target;
  int target_index;

  float operator()(int r, std::size_t row) const {
    const float value = reals[static_cast<std::size_t>(r)][row];
    if (r == target_index) return static_cast<float>(dataset.normalize_target(value, target));
    const ScalerStats& st = stats[static_cast<std::size_t>(r)];
    return static_cast<float>((static_cast<double>(value) - st.mean) / st.scale);
  }
};

}  // namespace

TimeSeriesDataset TimeSeriesDataset::load(const TrainConfig& config) {
  const std::unique_ptr<RowSource> source = open_data_file(config.data);
  return from_source(*source, config, nullptr);
}

TimeSeriesDataset TimeSeriesDataset::load(const TrainConfig& config, const DataTransforms& fitted) {
  const std::unique_ptr<RowSource> source = open_data_file(config.data);
  return from_source(*source, config, &fitted);
}

TimeSeriesDataset TimeSeriesDataset::from_reader(CsvReader reader, const TrainConfig& config,
                                                 const DataTransforms* fitted) {
  CsvRowSource source(std::move(reader));
  return from_source(source, config, fitted);
}

TimeSeriesDataset TimeSeriesDataset::from_source(RowSource& source, const TrainConfig& config,
                                                 const DataTransforms* fitted,
                                                 const FittedTransformsUse& use) {
  config.validate();
  DatasetBuilder builder(source, config, fitted, use);
  return builder.build();
}

std::string TimeSeriesDataset::format_time(std::int64_t value) const {
  if (time_kind_ == TimeKind::Integer) return std::to_string(value);
  return format_iso8601(value, time_kind_ == TimeKind::Date, times_have_zone_);
}

const std::vector<float>& TimeSeriesDataset::real_column(const std::string& name) const {
  for (std::size_t r = 0; r < real_names_.size(); ++r) {
    if (real_names_[r] == name) return reals_[r];
  }
  throw DataError("no stored real column '" + name + "' (stored: " + join(real_names_) + ")");
}

const std::vector<std::int32_t>& TimeSeriesDataset::categorical_column(
    const std::string& name) const {
  for (std::size_t c = 0; c < categorical_names_.size(); ++c) {
    if (categorical_names_[c] == name) return categoricals_[c];
  }
  throw DataError("no time-varying categorical column '" + name +
                  "' (stored: " + join(categorical_names_) + ")");
}

std::map<std::string, std::int64_t> TimeSeriesDataset::unknown_category_counts() const {
  std::map<std::string, std::int64_t> counts;
  for (std::size_t c = 0; c < categorical_names_.size(); ++c) {
    const auto n = std::count(categoricals_[c].begin(), categoricals_[c].end(), 0);
    if (n > 0) counts[categorical_names_[c]] = n;
  }
  const std::size_t n_static = schema_.static_categoricals.size();
  for (std::size_t i = 0; i < n_static; ++i) {
    std::int64_t n = 0;
    for (std::size_t s = 0; s < series_.size(); ++s)
      n += static_categoricals_[s * n_static + i] == 0;
    if (n > 0) counts[schema_.static_categoricals[i].name] = n;
  }
  return counts;
}

ScalerStats TimeSeriesDataset::target_stats(std::size_t series) const {
  const std::size_t column = scaler_column_[static_cast<std::size_t>(target_index_)];
  return transforms_.scaler.stats(scaler_row_[series], column);
}

ScalerStats TimeSeriesDataset::target_normalization(std::size_t series,
                                                    std::int64_t encoder_start) const {
  const ScalerStats fitted = target_stats(series);
  const TargetNormalizerConfig& normalizer = transforms_.target_normalizer;
  if (normalizer.scope == TargetScope::Series) return fitted;
  const std::vector<float>& column = reals_[static_cast<std::size_t>(target_index_)];
  const auto first = static_cast<std::size_t>(series_[series].offset + encoder_start);
  return fit_encoder_stats(normalizer, column.data() + first,
                           static_cast<std::size_t>(encoder_length_), fitted);
}

double TimeSeriesDataset::decoder_center(std::size_t last_row, std::int64_t h,
                                         const ScalerStats& window) const {
  const std::int64_t m = transforms_.target_season;
  if (m <= 0) return window.mean;
  const std::vector<float>& column = reals_[static_cast<std::size_t>(target_index_)];
  return transform_target(transforms_.target_normalizer.transformation,
                          column[seasonal_naive_row(last_row, h, m)]);
}

double TimeSeriesDataset::normalize_target(double y, const ScalerStats& stats) const {
  return (transform_target(transforms_.target_normalizer.transformation, y) - stats.mean) /
         stats.scale;
}

double TimeSeriesDataset::denormalize_target(double z, const ScalerStats& stats) const {
  return inverse_transform_target(transforms_.target_normalizer.transformation,
                                  z * stats.scale + stats.mean);
}

void TimeSeriesDataset::fill_static_inputs(std::size_t series, const SampleBuffers& out) const {
  const std::size_t n_sr = static_scaler_column_.size();
  for (std::size_t i = 0; i < n_sr; ++i) {
    out.static_reals[i] = static_cast<float>(transforms_.static_scaler.transform(
        static_reals_[series * n_sr + i], 0, static_scaler_column_[i]));
  }
  const std::size_t n_sc = static_cast<std::size_t>(widths_.static_categoricals);
  for (std::size_t i = 0; i < n_sc; ++i) {
    out.static_categoricals[i] = static_categoricals_[series * n_sc + i];
  }
}

void TimeSeriesDataset::fill_sample(const Window& window, const SampleBuffers& out) const {
  const std::size_t s = window.series;
  const SeriesInfo& info = series_[s];
  const std::size_t base = static_cast<std::size_t>(info.offset) + window.start;
  const auto enc = static_cast<std::size_t>(encoder_length_);
  const auto dec = static_cast<std::size_t>(prediction_length_);
  const double inv_enc = 1.0 / static_cast<double>(encoder_length_);

  // Statistics of every stored real for this series.
  std::vector<ScalerStats> stats(reals_.size());
  for (std::size_t r = 0; r < reals_.size(); ++r) {
    stats[r] = transforms_.scaler.stats(scaler_row_[s], scaler_column_[r]);
  }
  const ScalerStats target = target_normalization(s, window.start);
  if (out.target_center != nullptr) *out.target_center = target.mean;
  if (out.target_scale != nullptr) *out.target_scale = target.scale;
  const ScaledReals scaled{*this, reals_, stats, target, target_index_};

  fill_static_inputs(s, out);

  const std::size_t n_er = encoder_real_plan_.size();
  const std::size_t n_ec = encoder_categorical_plan_.size();
  for (std::size_t t = 0; t < enc; ++t) {
    const std::size_t row = base + t;
    for (std::size_t j = 0; j < n_er; ++j) {
      const int r = encoder_real_plan_[j];
      out.encoder_reals[t * n_er + j] =
          r == kRelativeTimeIdx
              ? static_cast<float>((static_cast<double>(t) - static_cast<double>(enc)) * inv_enc)
              : scaled(r, row);
    }
    for (std::size_t j = 0; j < n_ec; ++j) {
      out.encoder_categoricals[t * n_ec + j] =
          categoricals_[static_cast<std::size_t>(encoder_categorical_plan_[j])][row];
    }
  }
  const std::size_t n_dr = decoder_real_plan_.size();
  const std::size_t n_dc = decoder_categorical_plan_.size();
  for (std::size_t t = 0; t < dec; ++t) {
    const std::size_t row = base + enc + t;
    for (std::size_t j = 0; j < n_dr; ++j) {
      const int r = decoder_real_plan_[j];
      out.decoder_reals[t * n_dr + j] = r == kRelativeTimeIdx
                                            ? static_cast<float>(static_cast<double>(t) * inv_enc)
                                            : scaled(r, row);
    }
    for (std::size_t j = 0; j < n_dc; ++j) {
      out.decoder_categoricals[t * n_dc + j] =
          categoricals_[static_cast<std::size_t>(decoder_categorical_plan_[j])][row];
    }
    const ScalerStats step{decoder_center(base + enc - 1, static_cast<std::int64_t>(t), target),
                           target.scale};
    if (out.decoder_center != nullptr) out.decoder_center[t] = step.mean;
    if (out.targets != nullptr) {
      out.targets[t] = static_cast<float>(
          normalize_target(reals_[static_cast<std::size_t>(target_index_)][row], step));
    }
    if (out.decoder_times != nullptr) out.decoder_times[t] = times_[row];
  }
}

std::size_t TimeSeriesDataset::storage_bytes() const {
  std::size_t bytes = times_.capacity() * sizeof(std::int64_t);
  for (const auto& c : reals_) bytes += c.capacity() * sizeof(float);
  for (const auto& c : categoricals_) bytes += c.capacity() * sizeof(std::int32_t);
  bytes += static_reals_.capacity() * sizeof(double);
  bytes += static_categoricals_.capacity() * sizeof(std::int64_t);
  bytes += (training_windows_.capacity() + validation_windows_.capacity()) * sizeof(Window);
  bytes += series_.capacity() * sizeof(SeriesInfo);
  for (const SeriesInfo& s : series_) {
    bytes += s.label.capacity();
    for (const std::string& v : s.group_values) bytes += v.capacity();
  }
  return bytes;
}

std::size_t TimeSeriesDataset::materialized_window_bytes() const {
  const BatchWidths& w = widths_;
  const auto enc = static_cast<std::size_t>(encoder_length_);
  const auto dec = static_cast<std::size_t>(prediction_length_);
  // float32 reals and targets, int64 codes and times: the dtypes of the batch tensors.
  const std::size_t per_window =
      static_cast<std::size_t>(w.static_reals) * 4 +
      static_cast<std::size_t>(w.static_categoricals) * 8 +
      enc * (static_cast<std::size_t>(w.encoder_reals) * 4 +
             static_cast<std::size_t>(w.encoder_categoricals) * 8) +
      dec * (static_cast<std::size_t>(w.decoder_reals) * 4 +
             static_cast<std::size_t>(w.decoder_categoricals) * 8 + 4 + 8);
  return per_window * (training_windows_.size() + validation_windows_.size());
}

}  // namespace tft
