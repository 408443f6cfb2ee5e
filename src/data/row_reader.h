// Reading a dataset's rows (row_source.h) into typed columns, in file order: each row's time,
// series and the value of every planned column (column_plan.h), missing values handled by
// data.missing_values, categories interned as ids in first-seen order. Checks on the way: the
// rows of a series are in strictly increasing time order and its static columns are
// constant. series_storage.h then makes the columns series-contiguous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/column_plan.h"
#include "readers/row_source.h"

namespace tft {

struct LoadedRows {
  // In order of first appearance: group values, label, first_line, length (its rows). Series
  // whose every row was dropped are left out.
  std::vector<SeriesInfo> series;
  std::vector<std::uint32_t> row_series;  // each row's series
  bool interleaved = false;               // rows of different series interleave
  std::vector<std::int64_t> times;
  std::vector<std::vector<float>> reals;                // ColumnPlan::reals order
  std::vector<std::vector<std::int32_t>> categoricals;  // ids into category_values[c]
  // Each categorical's values by id: ColumnPlan::categoricals, then static_categoricals.
  // Calendar categoricals start with their whole domain (derived_features.h).
  std::vector<std::vector<std::string>> category_values;
  std::vector<double> static_reals;      // series x static reals
  std::vector<std::int32_t> static_ids;  // series x static categoricals (ids)
  TimeKind time_kind = TimeKind::Integer;
  bool times_have_zone = false;
  std::int64_t dropped_rows = 0;
  std::int64_t filled_values = 0;
};

// Every row of `source`. `target_normalizer` gives the transformation whose domain the target
// must lie in. DataError naming the row and the column for every problem, and when no row is
// left.
LoadedRows read_rows(RowSource& source, const ColumnPlan& plan, const DataConfig& data,
                     const TargetNormalizerConfig& target_normalizer);

}  // namespace tft
