// The names of the series columns in every table of forecasts: forecast.csv, the predictions'
// Arrow stream and CSV (C API), and backtest.csv.
//
// data.group_columns keep their names, except one named like a fixed column of any of those
// tables (kind, origin, time, horizon, actual, q<level>, fold, naive, seasonal_naive): it gets
// the prefix "series_", again until the name is taken by nothing else. A panel grouped by
// `origin` (an airport) so reads series_origin beside the window's origin. Without group columns
// the one series column is "series" (the target's name as its value). One rule for every table,
// so a series has the same column names in each, and no reader (pandas, polars, Arrow) ever sees
// a name twice.
#pragma once

#include <string>
#include <vector>

namespace tft {

// The series columns' names for these group columns, in order.
std::vector<std::string> series_column_names(const std::vector<std::string>& group_columns);

// Whether `name` is a fixed column of some forecast table (see above): "kind", "origin", ...,
// or "q" followed by a number ("q0.5", "q1e-3").
bool is_fixed_forecast_column(const std::string& name);

}  // namespace tft
