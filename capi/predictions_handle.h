// The tft_predictions handle: forecasts copied out of a trainer or a loaded model, with what
// is needed to describe them (series names, the CSV text), so it outlives its producer.
#pragma once

#include "api_guard.h"

#include <string>
#include <vector>

#include "data/time_series_dataset.h"
#include "report/forecast.h"

struct tft_predictions {
  static constexpr std::uint64_t kMagic = 0x746674707264ULL;  // "tftprd"
  static constexpr const char* kTypeName = "tft_predictions";
  tft::Predictions predictions;
  std::vector<std::string> series_names;  // per dataset series
  std::string csv;                        // forecast.csv's text
  // What tft_predictions_to_arrow_stream types and names its columns by: forecast.csv's
  // series columns (report/series_columns.h) and each series' values in them.
  std::vector<std::string> series_columns;
  std::vector<std::vector<std::string>> series_values;  // per dataset series
  tft::TimeKind time_kind = tft::TimeKind::Integer;
  bool times_have_zone = false;
};

namespace tft::capi {

// A new handle for `predictions` made from `dataset` (series with data.group_columns).
tft_predictions* make_predictions(const TimeSeriesDataset& dataset, Predictions predictions,
                                  const std::vector<std::string>& group_columns);

}  // namespace tft::capi
