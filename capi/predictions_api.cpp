// tft_predictions_*: reading forecasts out into caller memory, or to a CSV file.
#include "predictions_handle.h"

#include <cstring>

#include "common/atomic_file.h"
#include "report/forecast_csv.h"
#include "report/series_columns.h"

using tft::capi::live;
using tft::capi::require;

namespace tft::capi {

tft_predictions* make_predictions(const TimeSeriesDataset& dataset, Predictions predictions,
                                  const std::vector<std::string>& group_columns) {
  auto handle = std::make_unique<tft_predictions>();
  handle->csv = forecast_csv(dataset, predictions, group_columns);
  for (std::size_t s = 0; s < dataset.series().size(); ++s) {
    const SeriesInfo& info = dataset.series()[s];
    std::string name;
    for (std::size_t i = 0; i < info.group_values.size(); ++i) {
      name += (i > 0 ? "/" : "") + info.group_values[i];
    }
    handle->series_names.push_back(std::move(name));
    handle->series_values.push_back(group_columns.empty()
                                        ? std::vector<std::string>{series_label(dataset, s)}
                                        : info.group_values);
  }
  handle->series_columns = series_column_names(group_columns);
  handle->time_kind = dataset.time_kind();
  handle->times_have_zone = dataset.times_have_zone();
  handle->predictions = std::move(predictions);
  return publish(std::move(handle));
}

}  // namespace tft::capi

namespace {

std::size_t horizon_of(const tft::Predictions& p) {
  return static_cast<std::size_t>(p.prediction_length);
}

// The header's (array, count, needed) convention: stores `required` in *needed, then returns
// false for a size query (array NULL, count 0) and throws when the array is NULL with a count
// or too short (nothing is written); true when there is room.
bool has_room(const void* array, std::size_t count, std::size_t* needed, std::size_t required,
              const char* function, const char* parameter) {
  if (array == nullptr && count != 0) {
    throw tft::InvalidArgumentError(std::string(function) + ": '" + parameter +
                                    "' is NULL but 'count' is " + std::to_string(count));
  }
  if (needed != nullptr) *needed = required;
  if (array == nullptr) return false;
  if (count < required) {
    throw tft::capi::BufferTooSmall(std::string(function) + ": '" + parameter + "' holds " +
                                    std::to_string(count) + " elements, " +
                                    std::to_string(required) + " are needed");
  }
  return true;
}

// Copies one per-forecast array field (`width` elements each) into `out`.
template <typename T, typename Field>
void copy_fields(const tft::Predictions& p, std::size_t width, T* out, Field field) {
  for (const tft::Forecast& f : p.forecasts) {
    const auto& source = field(f);
    std::memcpy(out, source.data(), width * sizeof(T));
    out += width;
  }
}

}  // namespace

extern "C" {

void tft_predictions_free(tft_predictions* predictions) { tft::capi::destroy(predictions); }

tft_status tft_predictions_get_shape(const tft_predictions* predictions, size_t* forecasts,
                                     size_t* horizon, size_t* quantiles) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  if (forecasts != nullptr) *forecasts = p.forecasts.size();
  if (horizon != nullptr) *horizon = horizon_of(p);
  if (quantiles != nullptr) *quantiles = p.quantiles.size();
  TFT_API_END
}

tft_status tft_predictions_get_quantiles(const tft_predictions* predictions, double* levels,
                                         size_t count, size_t* needed) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  if (!has_room(levels, count, needed, p.quantiles.size(), __func__, "levels")) return TFT_OK;
  std::copy(p.quantiles.begin(), p.quantiles.end(), levels);
  TFT_API_END
}

tft_status tft_predictions_get_forecast_info(const tft_predictions* predictions, size_t index,
                                             tft_forecast_info* info) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  tft::capi::require_struct(info, __func__, "info");
  if (index >= p.forecasts.size()) {
    throw tft::InvalidArgumentError(std::string(__func__) + ": index " + std::to_string(index) +
                                    " is out of range (" + std::to_string(p.forecasts.size()) +
                                    " forecasts)");
  }
  const tft::Forecast& f = p.forecasts[index];
  tft_forecast_info result{};
  result.struct_size = sizeof result;
  result.series = f.series;
  result.origin = f.origin;
  result.is_future = f.future ? 1 : 0;
  tft::capi::fill_struct(info, result);
  TFT_API_END
}

tft_status tft_predictions_get_series_name(const tft_predictions* predictions, size_t series,
                                           char* buf, size_t len, size_t* needed) {
  TFT_API_BEGIN
  const auto* handle = live(predictions, __func__, "predictions");
  if (series >= handle->series_names.size()) {
    throw tft::InvalidArgumentError(std::string(__func__) + ": series " + std::to_string(series) +
                                    " is out of range (" +
                                    std::to_string(handle->series_names.size()) + " series)");
  }
  return tft::capi::copy_out(handle->series_names[series], buf, len, needed, __func__);
  TFT_API_END
}

tft_status tft_predictions_get_values(const tft_predictions* predictions, float* values,
                                      size_t count, size_t* needed) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  const std::size_t width = horizon_of(p) * p.quantiles.size();
  if (!has_room(values, count, needed, p.forecasts.size() * width, __func__, "values")) {
    return TFT_OK;
  }
  copy_fields(p, width, values, [](const tft::Forecast& f) -> const auto& { return f.values; });
  TFT_API_END
}

tft_status tft_predictions_get_actuals(const tft_predictions* predictions, float* actuals,
                                       size_t count, size_t* needed) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  const std::size_t required = p.forecasts.size() * horizon_of(p);
  if (!has_room(actuals, count, needed, required, __func__, "actuals")) return TFT_OK;
  copy_fields(p, horizon_of(p), actuals,
              [](const tft::Forecast& f) -> const auto& { return f.actuals; });
  TFT_API_END
}

tft_status tft_predictions_get_times(const tft_predictions* predictions, int64_t* times,
                                     size_t count, size_t* needed) {
  TFT_API_BEGIN
  const tft::Predictions& p = live(predictions, __func__, "predictions")->predictions;
  const std::size_t required = p.forecasts.size() * horizon_of(p);
  if (!has_room(times, count, needed, required, __func__, "times")) return TFT_OK;
  copy_fields(p, horizon_of(p), times,
              [](const tft::Forecast& f) -> const auto& { return f.times; });
  TFT_API_END
}

tft_status tft_predictions_write_csv(const tft_predictions* predictions, const char* path) {
  TFT_API_BEGIN
  const auto* handle = live(predictions, __func__, "predictions");
  require(path, __func__, "path");
  tft::write_file_atomically(path, handle->csv);
  TFT_API_END
}

}  // extern "C"
