// Running a trained model over windows: validation metrics, and forecasts in original units
// for the validation windows and for the window after the data of every series
// (data/future_window.h), with the interpretation of the validation windows.
//
// The model runs in eval mode (no dropout) without autograd, in batches of `batch_size`
// windows in a fixed order, so the same weights give bitwise the same forecasts (on one device
// with the same thread count); its train/eval mode is restored afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "data/batch.h"
#include "data/time_series_dataset.h"
#include "model/tft_model.h"
#include "report/calibration.h"
#include "report/interpretation.h"
#include "report/metrics.h"

namespace tft {

struct Forecast {
  std::uint32_t series = 0;         // index into TimeSeriesDataset::series()
  std::int64_t origin = 0;          // time of the last encoder step: the forecast is made after it
  bool future = false;              // true: the window after the data (actuals unknown)
  std::vector<std::int64_t> times;  // [prediction_length] time values of the decoder steps
  std::vector<float> values;        // [prediction_length x quantiles], row-major, original units
  std::vector<float> actuals;       // [prediction_length], original units; NaN where unknown

  float value(std::size_t step, std::size_t quantile, std::size_t num_quantiles) const {
    return values[step * num_quantiles + quantile];
  }
};

struct Predictions {
  std::vector<double> quantiles;
  std::int64_t prediction_length = 0;
  // The validation windows in the dataset's order, then one future window per series (in
  // series order).
  std::vector<Forecast> forecasts;
  // Over the validation windows (empty when there are none).
  Interpretation interpretation;
};

// How outputs name a series: its group values ('A', store=1, item=2), or the target's name
// for the one series of a file without data.group_columns.
std::string series_label(const TimeSeriesDataset& dataset, std::size_t series);

// Calls `fn(batch, output)` for each batch of `windows` in order (eval mode, no grad).
void for_each_batch_output(TFTModel& model, const TimeSeriesDataset& dataset,
                           const std::vector<Window>& windows, std::int64_t batch_size,
                           const c10::Device& device,
                           const std::function<void(const TrainingBatch&, const TFTOutput&)>& fn);

// The metric sums (metrics.h) over `windows`: accumulate_windows(...).result() is
// evaluate_windows(...); the sums themselves can be added across processes.
MetricAccumulator accumulate_windows(TFTModel& model, const TimeSeriesDataset& dataset,
                                     const std::vector<Window>& windows, std::int64_t batch_size,
                                     const c10::Device& device);

// Loss, q-risk and MAE (metrics.h) over `windows`.
ValidationMetrics evaluate_windows(TFTModel& model, const TimeSeriesDataset& dataset,
                                   const std::vector<Window>& windows, std::int64_t batch_size,
                                   const c10::Device& device);

// Forecasts of the validation windows and of the windows after the data, with `calibration`
// applied to every quantile forecast (none: the model's own).
Predictions predict_forecasts(TFTModel& model, const TimeSeriesDataset& dataset,
                              std::int64_t batch_size, const c10::Device& device,
                              const QuantileCalibration& calibration = {});

}  // namespace tft
