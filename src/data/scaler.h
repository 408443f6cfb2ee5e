// Standard scaling, (x - mean) / scale, of real columns: one set of statistics per series
// (per_series), one for all series (global), or none. Fitted by TimeSeriesDataset on the
// training part of each series only, and serialisable so it can be stored with the model and
// applied to new data (forecasts are written back in original units with inverse()).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/train_config.h"
#include "data/row_range.h"

namespace tft {

struct ScalerStats {
  double mean = 0.0;
  double scale = 1.0;  // the standard deviation; 1 where it is 0 (a constant column)
};

// Mean and population standard deviation (two passes, in double) of `count` values; a
// deviation below 1e-12 * max(1, |mean|), or count == 0, gives scale 1 (mean 0 when empty).
ScalerStats compute_stats(const float* values, std::size_t count);
ScalerStats compute_stats(const double* values, std::size_t count);

class StandardScaler {
 public:
  // Mode None, no columns.
  StandardScaler() = default;
  // `groups`: the group values of each series (per_series), ignored otherwise. `stats`:
  // groups x columns, row-major (per_series: one row per group; global: one row; none: empty).
  // DataError when the sizes do not match.
  StandardScaler(ScalingMode mode, std::vector<std::string> columns,
                 std::vector<std::vector<std::string>> groups, std::vector<ScalerStats> stats);

  ScalingMode mode() const { return mode_; }
  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t num_groups() const { return groups_.size(); }
  const std::vector<std::vector<std::string>>& groups() const { return groups_; }

  // The statistics row for a series with these group values: its own (per_series), the one
  // row (global), or nothing (none, or a series the scaler was not fitted on).
  std::optional<std::size_t> find_group(const std::vector<std::string>& group_values) const;
  // Statistics of `column` in row `row` ({0, 1} for mode none).
  ScalerStats stats(std::size_t row, std::size_t column) const;
  // Index of a column by name; nothing when absent.
  std::optional<std::size_t> column_index(const std::string& name) const;

  double transform(double value, std::size_t row, std::size_t column) const {
    const ScalerStats s = stats(row, column);
    return (value - s.mean) / s.scale;
  }
  double inverse(double value, std::size_t row, std::size_t column) const {
    const ScalerStats s = stats(row, column);
    return value * s.scale + s.mean;
  }

  // {"mode": "per_series", "columns": [...], "groups": [["A"], ...],
  //  "mean": [[...], ...], "scale": [[...], ...]} (one inner array per row).
  nlohmann::json to_json() const;
  static StandardScaler from_json(const nlohmann::json& json);

 private:
  ScalingMode mode_ = ScalingMode::None;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> groups_;
  std::vector<ScalerStats> stats_;
  std::unordered_map<std::string, std::size_t> group_index_;  // joined group values -> row
};

bool operator==(const StandardScaler& a, const StandardScaler& b);
bool operator!=(const StandardScaler& a, const StandardScaler& b);

// Fitting on the training parts of series (TimeSeriesDataset).

// compute_stats of the rows of `column` in `parts`, taken in that order.
ScalerStats compute_stats(const std::vector<float>& column, const std::vector<RowRange>& parts);

// The statistics of column `column` over the rows `parts`.
using ColumnStatsFn =
    std::function<ScalerStats(std::size_t column, const std::vector<RowRange>& parts)>;

// A scaler of `mode` for `columns`, fitted on the training parts of the series (`parts`, one
// per series, `groups` their group values): per_series one row of statistics per series,
// global one row over all parts, none no statistics.
StandardScaler fit_scaler(ScalingMode mode, std::vector<std::string> columns,
                          std::vector<std::vector<std::string>> groups,
                          const std::vector<RowRange>& parts, const ColumnStatsFn& column_stats);

// The scaler of static reals, `values` series x columns (row-major): global statistics over
// the series (none when `mode` is none).
StandardScaler fit_static_scaler(ScalingMode mode, std::vector<std::string> columns,
                                 const std::vector<double>& values);

// `kept` with the rows of `fitted` (same mode and columns) for the groups `kept` lacks: a refit
// keeping the saved per-series statistics while fitting new series' (train/refit.h). `kept`
// itself unless the mode is per_series. DataError naming the column when the columns differ.
StandardScaler with_new_groups(const StandardScaler& kept, const StandardScaler& fitted);

// Joins group values into one map key (unit separator between values).
std::string series_key(const std::vector<std::string>& group_values);

}  // namespace tft
