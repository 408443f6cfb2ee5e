// tft_predictions_to_arrow_stream: forecasts as one Arrow record batch with forecast.csv's
// columns, typed (Arrow C++ builds it and exports it through the C stream interface).
#include "predictions_handle.h"

#include "common/error.h"
#include "common/format.h"

#ifdef TFT_WITH_PARQUET
#include <arrow/api.h>
#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#endif

using tft::capi::live;
using tft::capi::require;

#ifdef TFT_WITH_PARQUET

namespace {

constexpr std::int64_t kMicrosPerDay = std::int64_t{86400} * 1000000;

template <typename T>
T value_of(arrow::Result<T> result) {
  if (!result.ok()) throw tft::Error("Arrow: " + result.status().ToString());
  return std::move(*result);
}

void check(const arrow::Status& status) {
  if (!status.ok()) throw tft::Error("Arrow: " + status.ToString());
}

std::shared_ptr<arrow::DataType> time_type(const tft_predictions& p) {
  switch (p.time_kind) {
    case tft::TimeKind::Integer: return arrow::int64();
    case tft::TimeKind::Date: return arrow::date32();
    case tft::TimeKind::DateTime:
      return arrow::timestamp(arrow::TimeUnit::MICRO, p.times_have_zone ? "UTC" : "");
  }
  return arrow::int64();
}

// A column of times (microseconds, or the integer) in the predictions' time type.
std::shared_ptr<arrow::Array> time_array(const tft_predictions& p,
                                         const std::vector<std::int64_t>& values) {
  if (p.time_kind == tft::TimeKind::Date) {
    arrow::Date32Builder days;
    for (const std::int64_t v : values) {
      const std::int64_t floor = v / kMicrosPerDay - (v % kMicrosPerDay < 0 ? 1 : 0);
      check(days.Append(static_cast<std::int32_t>(floor)));
    }
    return value_of(days.Finish());
  }
  arrow::Int64Builder numbers;
  check(numbers.AppendValues(values));
  const std::shared_ptr<arrow::Array> raw = value_of(numbers.Finish());
  if (p.time_kind == tft::TimeKind::Integer) return raw;
  return arrow::MakeArray(raw->data()->Copy())->View(time_type(p)).ValueOrDie();
}

std::shared_ptr<arrow::RecordBatch> forecast_batch(const tft_predictions& handle) {
  const tft::Predictions& p = handle.predictions;
  const std::size_t nq = p.quantiles.size();
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  arrow::StringBuilder kind;
  std::vector<arrow::StringBuilder> series(handle.series_columns.size());
  std::vector<std::int64_t> origins;
  std::vector<std::int64_t> times;
  arrow::Int64Builder horizon;
  std::vector<arrow::DoubleBuilder> quantiles(nq);
  arrow::DoubleBuilder actual;
  for (const tft::Forecast& f : p.forecasts) {
    const std::vector<std::string>& values = handle.series_values[f.series];
    for (std::size_t h = 0; h < f.times.size(); ++h) {
      check(kind.Append(f.future ? "future" : "validation"));
      for (std::size_t c = 0; c < series.size(); ++c) check(series[c].Append(values[c]));
      origins.push_back(f.origin);
      times.push_back(f.times[h]);
      check(horizon.Append(static_cast<std::int64_t>(h + 1)));
      for (std::size_t q = 0; q < nq; ++q) {
        check(quantiles[q].Append(static_cast<double>(f.value(h, q, nq))));
      }
      const float a = f.actuals[h];
      check(a != a ? actual.AppendNull() : actual.Append(static_cast<double>(a)));
    }
  }
  auto add = [&](const std::string& name, std::shared_ptr<arrow::Array> array, bool nullable) {
    fields.push_back(arrow::field(name, array->type(), nullable));
    columns.push_back(std::move(array));
  };
  add("kind", value_of(kind.Finish()), false);
  for (std::size_t c = 0; c < series.size(); ++c) {
    add(handle.series_columns[c], value_of(series[c].Finish()), false);
  }
  add("origin", time_array(handle, origins), false);
  add("time", time_array(handle, times), false);
  add("horizon", value_of(horizon.Finish()), false);
  for (std::size_t q = 0; q < nq; ++q) {
    add("q" + tft::shortest_double(p.quantiles[q]), value_of(quantiles[q].Finish()), false);
  }
  add("actual", value_of(actual.Finish()), true);
  const auto rows = static_cast<std::int64_t>(origins.size());
  return arrow::RecordBatch::Make(arrow::schema(fields), rows, columns);
}

}  // namespace

#endif

extern "C" {

tft_status tft_predictions_to_arrow_stream(const tft_predictions* predictions,
                                           ArrowArrayStream* out) {
  TFT_API_BEGIN
  const tft_predictions* handle = live(predictions, __func__, "predictions");
  require(out, __func__, "out");
#ifdef TFT_WITH_PARQUET
  const std::shared_ptr<arrow::RecordBatch> batch = forecast_batch(*handle);
  auto reader = value_of(arrow::RecordBatchReader::Make({batch}, batch->schema()));
  ArrowArrayStream stream{};
  check(arrow::ExportRecordBatchReader(reader, &stream));
  *out = stream;
#else
  (void)handle;
  throw tft::UnsupportedError(std::string(__func__) +
                              ": this build of tftrain was built without Arrow (configure it "
                              "with pyarrow installed: -DTFT_WITH_PARQUET=ON)");
#endif
  TFT_API_END
}

}  // extern "C"
