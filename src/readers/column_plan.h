// Which header column (or derived feature, derived_features.h) each configured variable is
// read from: the first step of loading a dataset. Every configured column must be in the
// header once (derived features aside, which must be known inputs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/train_config.h"
#include "readers/derived_features.h"
#include "readers/row_source.h"

namespace tft {

// Where a variable's values come from.
struct ColumnSource {
  int column = -1;  // header index, or -1 for a derived feature
  DerivedFeature derived = DerivedFeature::None;
};

struct PlannedReal {
  std::string name;
  ColumnSource source;
};

struct PlannedCategorical {
  std::string name;
  ColumnSource source;
  std::int64_t embedding_dim = 0;
};

struct ColumnPlan {
  int time = 0;             // header index of data.time_column
  std::vector<int> groups;  // header indices of data.group_columns
  // Stored time-varying reals: unknown_reals, known_reals (relative_time_idx aside, which is
  // computed per window), then the target.
  std::vector<PlannedReal> reals;
  // Time-varying categoricals: unknown_categoricals, then known_categoricals.
  std::vector<PlannedCategorical> categoricals;
  std::vector<PlannedReal> static_reals;
  std::vector<PlannedCategorical> static_categoricals;
  std::string needs_calendar;    // a calendar feature in use, if any
  bool header_has_hour = false;  // a column named "hour" is read, not derived

  // The header columns to read (RowSource::select_columns): time, groups and every named
  // column, sorted, each once.
  std::vector<int> read_columns() const;
  // The target's place among `reals` (DataError when absent).
  std::size_t target_index(const std::string& target) const;
};

// DataError at the header for a configured column missing from it or repeated in it, and for
// a derived feature that is not a known input (or relative_time_idx as a categorical).
ColumnPlan plan_columns(const RowSource& source, const DataConfig& data);

}  // namespace tft
