// forecast.csv: one row per forecast step, in original units (docs/outputs.md).
//
//   kind,<group columns...>,origin,time,horizon,q0.1,q0.5,q0.9,actual
//   validation,store_00,2023-09-01,2023-09-02,1,371.2,380.9,392.4,379.6
//   future,store_00,2023-12-31,2024-01-01,1,402.5,415.0,431.8,
//
// kind is "validation" (a validation window: actual known) or "future" (the window after the
// data: actual empty). Series columns are named by series_column_names (series_columns.h):
// data.group_columns, one renamed where it shares a fixed column's name, or one column "series"
// holding the target's name when there are none; origin is the time of the last observed (encoder)
// step, time the forecast step's time (times as they were read, TimeSeriesDataset::format_time),
// horizon 1 ... prediction_length. Quantile columns are named "q" + the level. Fields are
// quoted per RFC 4180 when they need it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "data/time_series_dataset.h"
#include "report/forecast.h"

namespace tft {

// The CSV text for `predictions` of `dataset`; `group_columns` are data.group_columns.
std::string forecast_csv(const TimeSeriesDataset& dataset, const Predictions& predictions,
                         const std::vector<std::string>& group_columns);

// Writes it atomically (atomic_file.h).
void write_forecast_csv(const std::filesystem::path& path, const TimeSeriesDataset& dataset,
                        const Predictions& predictions,
                        const std::vector<std::string>& group_columns);

// A CSV field per RFC 4180: quoted, with quotes doubled, when it holds a comma, a quote or a
// line break. Used by backtest.csv too.
std::string csv_field(const std::string& text);

// Shortest decimal text of a float that reads back as the same float ("1455.22"); empty for
// NaN. Used by the CSV and the plot.
std::string float_text(float value);

}  // namespace tft
