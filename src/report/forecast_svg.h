// forecast.svg: forecast against actual for up to four series, hand-written SVG (no plotting
// dependency). One panel per series (evenly spread over the series when there are more):
//   - the actual target (black) over the validation part and some history before it;
//   - validation forecasts (blue): the median (P50) line and the P10-P90 band of a set of
//     validation windows that tile the validation part without overlapping (chosen from the
//     last one backwards, so they reach the data's end), each drawn over its whole horizon
//     (what the model said up to prediction_length steps ahead, not 1 step ahead);
//   - the forecast after the data (orange), where no actual exists yet;
//   - dashed lines where the validation part and the future begin.
// Without the 0.1 / 0.5 / 0.9 quantiles, the lowest / middle / highest forecast ones are used.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "data/time_series_dataset.h"
#include "report/forecast.h"

namespace tft {

struct ForecastPlotOptions {
  std::size_t max_panels = 4;
  int width = 960;
  int panel_height = 250;
  std::string title = "Forecast vs actual";
};

std::string forecast_svg(const TimeSeriesDataset& dataset, const Predictions& predictions,
                         const std::string& target, const ForecastPlotOptions& options = {});

void write_forecast_svg(const std::filesystem::path& path, const TimeSeriesDataset& dataset,
                        const Predictions& predictions, const std::string& target,
                        const ForecastPlotOptions& options = {});

}  // namespace tft
