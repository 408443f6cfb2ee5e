#include "report/forecast_csv.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/atomic_file.h"
#include "common/format.h"
#include "report/series_columns.h"

namespace tft {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string float_text(float value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(value));
    if (std::strtof(buf, nullptr) == value) break;
  }
  return buf;
}

std::string forecast_csv(const TimeSeriesDataset& dataset, const Predictions& predictions,
                         const std::vector<std::string>& group_columns) {
  std::string out = "kind";
  for (const std::string& name : series_column_names(group_columns)) out += "," + csv_field(name);
  out += ",origin,time,horizon";
  for (double q : predictions.quantiles) out += ",q" + shortest_double(q);
  out += ",actual\n";
  const std::size_t nq = predictions.quantiles.size();
  for (const Forecast& f : predictions.forecasts) {
    const SeriesInfo& info = dataset.series()[f.series];
    std::string series;
    if (group_columns.empty()) {
      series = csv_field(series_label(dataset, f.series));
    } else {
      for (std::size_t i = 0; i < info.group_values.size(); ++i) {
        series += (i > 0 ? "," : "") + csv_field(info.group_values[i]);
      }
    }
    const std::string origin = csv_field(dataset.format_time(f.origin));
    for (std::size_t h = 0; h < f.times.size(); ++h) {
      out += f.future ? "future," : "validation,";
      out += series;
      out += ',';
      out += origin;
      out += ',';
      out += csv_field(dataset.format_time(f.times[h]));
      out += ',';
      out += std::to_string(h + 1);
      for (std::size_t q = 0; q < nq; ++q) {
        out += ',';
        out += float_text(f.value(h, q, nq));
      }
      out += ',';
      out += float_text(f.actuals[h]);
      out += '\n';
    }
  }
  return out;
}

void write_forecast_csv(const std::filesystem::path& path, const TimeSeriesDataset& dataset,
                        const Predictions& predictions,
                        const std::vector<std::string>& group_columns) {
  write_file_atomically(path, forecast_csv(dataset, predictions, group_columns));
}

}  // namespace tft
