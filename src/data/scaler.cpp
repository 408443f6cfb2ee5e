#include "data/scaler.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace tft {

namespace {

[[noreturn]] void fail(const std::string& what) { throw DataError("scaler: " + what); }

}  // namespace

std::string series_key(const std::vector<std::string>& group_values) {
  std::string key;
  for (std::size_t i = 0; i < group_values.size(); ++i) {
    if (i > 0) key += '\x1f';
    key += group_values[i];
  }
  return key;
}

namespace {

template <typename T>
ScalerStats stats_of(const T* values, std::size_t count) {
  ScalerStats s;
  if (count == 0) return s;
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) sum += static_cast<double>(values[i]);
  const double mean = sum / static_cast<double>(count);
  double squares = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(values[i]) - mean;
    squares += d * d;
  }
  const double deviation = std::sqrt(squares / static_cast<double>(count));
  s.mean = mean;
  s.scale = deviation > 1e-12 * std::max(1.0, std::fabs(mean)) ? deviation : 1.0;
  return s;
}

}  // namespace

ScalerStats compute_stats(const float* values, std::size_t count) {
  return stats_of(values, count);
}

ScalerStats compute_stats(const double* values, std::size_t count) {
  return stats_of(values, count);
}

StandardScaler::StandardScaler(ScalingMode mode, std::vector<std::string> columns,
                               std::vector<std::vector<std::string>> groups,
                               std::vector<ScalerStats> stats)
    : mode_(mode), columns_(std::move(columns)), stats_(std::move(stats)) {
  std::size_t rows = 0;
  if (mode_ == ScalingMode::PerSeries) {
    groups_ = std::move(groups);
    rows = groups_.size();
  } else if (mode_ == ScalingMode::Global) {
    rows = 1;
  }
  if (stats_.size() != rows * columns_.size()) {
    fail("expected " + std::to_string(rows) + " x " + std::to_string(columns_.size()) +
         " statistics, got " + std::to_string(stats_.size()));
  }
  for (const ScalerStats& s : stats_) {
    if (!std::isfinite(s.mean) || !std::isfinite(s.scale) || s.scale <= 0.0) {
      fail("statistics must be finite with a positive scale (mean " + std::to_string(s.mean) +
           ", scale " + std::to_string(s.scale) + ")");
    }
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (!group_index_.emplace(series_key(groups_[g]), g).second) {
      fail("duplicate series in the scaler's groups");
    }
  }
}

std::optional<std::size_t> StandardScaler::find_group(
    const std::vector<std::string>& group_values) const {
  if (mode_ == ScalingMode::Global) return 0;
  if (mode_ == ScalingMode::None) return std::nullopt;
  const auto it = group_index_.find(series_key(group_values));
  if (it == group_index_.end()) return std::nullopt;
  return it->second;
}

ScalerStats StandardScaler::stats(std::size_t row, std::size_t column) const {
  if (mode_ == ScalingMode::None) return ScalerStats{};
  return stats_[row * columns_.size() + column];
}

std::optional<std::size_t> StandardScaler::column_index(const std::string& name) const {
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c] == name) return c;
  }
  return std::nullopt;
}

nlohmann::json StandardScaler::to_json() const {
  nlohmann::json mean = nlohmann::json::array();
  nlohmann::json scale = nlohmann::json::array();
  const std::size_t rows = columns_.empty() ? 0 : stats_.size() / columns_.size();
  for (std::size_t r = 0; r < rows; ++r) {
    nlohmann::json m = nlohmann::json::array();
    nlohmann::json s = nlohmann::json::array();
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      m.push_back(stats_[r * columns_.size() + c].mean);
      s.push_back(stats_[r * columns_.size() + c].scale);
    }
    mean.push_back(m);
    scale.push_back(s);
  }
  return nlohmann::json{{"mode", to_string(mode_)},
                        {"columns", columns_},
                        {"groups", groups_},
                        {"mean", mean},
                        {"scale", scale}};
}

StandardScaler StandardScaler::from_json(const nlohmann::json& json) {
  try {
    if (!json.is_object()) fail("expected an object");
    const std::string mode_name = json.at("mode").get<std::string>();
    ScalingMode mode;
    if (mode_name == to_string(ScalingMode::PerSeries)) {
      mode = ScalingMode::PerSeries;
    } else if (mode_name == to_string(ScalingMode::Global)) {
      mode = ScalingMode::Global;
    } else if (mode_name == to_string(ScalingMode::None)) {
      mode = ScalingMode::None;
    } else {
      fail("unknown mode \"" + mode_name + "\"");
    }
    auto columns = json.at("columns").get<std::vector<std::string>>();
    auto groups = json.at("groups").get<std::vector<std::vector<std::string>>>();
    const auto mean = json.at("mean").get<std::vector<std::vector<double>>>();
    const auto scale = json.at("scale").get<std::vector<std::vector<double>>>();
    if (mean.size() != scale.size()) fail("\"mean\" and \"scale\" differ in length");
    std::vector<ScalerStats> stats;
    for (std::size_t r = 0; r < mean.size(); ++r) {
      if (mean[r].size() != columns.size() || scale[r].size() != columns.size()) {
        fail("row " + std::to_string(r) + " does not have one value per column");
      }
      for (std::size_t c = 0; c < columns.size(); ++c) {
        stats.push_back(ScalerStats{mean[r][c], scale[r][c]});
      }
    }
    return StandardScaler(mode, std::move(columns), std::move(groups), std::move(stats));
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("malformed JSON: ") + e.what());
  }
}

bool operator==(const StandardScaler& a, const StandardScaler& b) {
  if (a.mode() != b.mode() || a.columns() != b.columns() || a.groups() != b.groups()) {
    return false;
  }
  const std::size_t rows = a.mode() == ScalingMode::PerSeries ? a.num_groups()
                           : a.mode() == ScalingMode::Global  ? 1
                                                              : 0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < a.columns().size(); ++c) {
      const ScalerStats x = a.stats(r, c);
      const ScalerStats y = b.stats(r, c);
      if (x.mean != y.mean || x.scale != y.scale) return false;
    }
  }
  return true;
}

bool operator!=(const StandardScaler& a, const StandardScaler& b) { return !(a == b); }

ScalerStats compute_stats(const std::vector<float>& column, const std::vector<RowRange>& parts) {
  if (parts.size() == 1) {
    return compute_stats(column.data() + parts[0].offset, static_cast<std::size_t>(parts[0].rows));
  }
  std::vector<float> buffer;
  for (const RowRange& part : parts) {
    const float* begin = column.data() + part.offset;
    buffer.insert(buffer.end(), begin, begin + part.rows);
  }
  return compute_stats(buffer.data(), buffer.size());
}

StandardScaler with_new_groups(const StandardScaler& kept, const StandardScaler& fitted) {
  if (kept.mode() != ScalingMode::PerSeries) return kept;
  if (fitted.mode() != kept.mode() || fitted.columns() != kept.columns()) {
    throw DataError("scaler: cannot add series fitted with other columns or another mode");
  }
  std::vector<std::vector<std::string>> groups = kept.groups();
  std::vector<ScalerStats> stats;
  const std::size_t columns = kept.columns().size();
  for (std::size_t row = 0; row < kept.num_groups(); ++row) {
    for (std::size_t c = 0; c < columns; ++c) stats.push_back(kept.stats(row, c));
  }
  for (std::size_t row = 0; row < fitted.num_groups(); ++row) {
    if (kept.find_group(fitted.groups()[row])) continue;
    groups.push_back(fitted.groups()[row]);
    for (std::size_t c = 0; c < columns; ++c) stats.push_back(fitted.stats(row, c));
  }
  return StandardScaler(ScalingMode::PerSeries, kept.columns(), std::move(groups),
                        std::move(stats));
}

StandardScaler fit_scaler(ScalingMode mode, std::vector<std::string> columns,
                          std::vector<std::vector<std::string>> groups,
                          const std::vector<RowRange>& parts, const ColumnStatsFn& column_stats) {
  std::vector<ScalerStats> stats;
  if (mode == ScalingMode::PerSeries) {
    for (const RowRange& part : parts) {
      for (std::size_t c = 0; c < columns.size(); ++c) stats.push_back(column_stats(c, {part}));
    }
  } else {
    groups.clear();
    if (mode == ScalingMode::Global) {
      for (std::size_t c = 0; c < columns.size(); ++c) stats.push_back(column_stats(c, parts));
    }
  }
  return StandardScaler(mode, std::move(columns), std::move(groups), std::move(stats));
}

StandardScaler fit_static_scaler(ScalingMode mode, std::vector<std::string> columns,
                                 const std::vector<double>& values) {
  const ScalingMode static_mode =
      mode == ScalingMode::None ? ScalingMode::None : ScalingMode::Global;
  std::vector<ScalerStats> stats;
  if (static_mode == ScalingMode::Global) {
    const std::size_t n_columns = columns.size();
    const std::size_t n_series = n_columns == 0 ? 0 : values.size() / n_columns;
    std::vector<double> column(n_series);
    for (std::size_t i = 0; i < n_columns; ++i) {
      for (std::size_t s = 0; s < n_series; ++s) column[s] = values[s * n_columns + i];
      stats.push_back(compute_stats(column.data(), column.size()));
    }
  }
  return StandardScaler(static_mode, std::move(columns), {}, std::move(stats));
}

}  // namespace tft
