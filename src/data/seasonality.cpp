#include "data/seasonality.h"

#include <algorithm>
#include <map>

#include "common/format.h"
#include "readers/iso8601.h"

namespace tft {

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

int weekday_of(std::int64_t micros) {
  const std::int64_t days = floor_div(micros, kMicrosPerDay);
  return static_cast<int>(((days + 3) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
}

SeriesTimeStep series_time_step(const TimeSeriesDataset& dataset, std::size_t series) {
  const SeriesInfo& info = dataset.series().at(series);
  const auto& times = dataset.times();
  const auto first = static_cast<std::size_t>(info.offset);
  const auto n = static_cast<std::size_t>(info.length);
  std::map<std::int64_t, std::int64_t> counts;
  const std::size_t from = n > 257 ? n - 257 : 0;
  for (std::size_t i = from + 1; i < n; ++i) ++counts[times[first + i] - times[first + i - 1]];
  SeriesTimeStep result;
  std::int64_t best = 0;
  for (const auto& [difference, count] : counts) {  // ascending: ties keep the smaller step
    if (count > best) {
      best = count;
      result.step = difference;
    }
  }
  if (dataset.time_kind() == TimeKind::Date && result.step == kMicrosPerDay && n >= 10) {
    result.business_days = true;
    for (std::size_t i = 0; i < n && result.business_days; ++i) {
      result.business_days = weekday_of(times[first + i]) < 5;
    }
  }
  return result;
}

bool is_sub_daily(const TimeSeriesDataset& dataset) {
  if (dataset.series().empty() || dataset.time_kind() == TimeKind::Integer) return false;
  const std::int64_t step = series_time_step(dataset, 0).step;
  return step > 0 && step < kMicrosPerDay;
}

std::int64_t infer_seasonality(const TimeSeriesDataset& dataset, std::string& source) {
  if (dataset.series().empty()) {
    source = "no series";
    return 0;
  }
  if (dataset.time_kind() == TimeKind::Integer) {
    source = "integer times have no known season; set model.seasonality";
    return 0;
  }
  const SeriesTimeStep step = series_time_step(dataset, 0);
  if (step.step == kMicrosPerHour) {
    source = "hourly data";
    return 24;
  }
  // A daily cycle of finer steps that divide the day: 48 half hours, 96 quarter hours.
  if (step.step > 0 && step.step < kMicrosPerDay && kMicrosPerDay % step.step == 0) {
    constexpr std::int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
    source = step.step % kMicrosPerMinute == 0
                 ? std::to_string(step.step / kMicrosPerMinute) + "-minute data"
                 : shortest_double(static_cast<double>(step.step) / 1e6) + "-second data";
    return kMicrosPerDay / step.step;
  }
  if (step.step == kMicrosPerDay) {
    source = step.business_days ? "business-daily data" : "daily data";
    return step.business_days ? 5 : 7;
  }
  source = "no season known for a time step of " +
           shortest_double(static_cast<double>(step.step) / 1e6) + " s; set model.seasonality";
  return 0;
}

std::vector<std::int64_t> candidate_seasons(const TimeSeriesDataset& dataset, std::int64_t season,
                                            std::int64_t max_rows) {
  std::vector<std::int64_t> seasons;
  if (season > 0) seasons.push_back(season);
  if (is_sub_daily(dataset)) {
    const std::int64_t step = series_time_step(dataset, 0).step;
    if (kMicrosPerDay % step == 0) {
      seasons.push_back(kMicrosPerDay / step);
      seasons.push_back(7 * (kMicrosPerDay / step));
    }
  }
  std::sort(seasons.begin(), seasons.end());
  seasons.erase(std::unique(seasons.begin(), seasons.end()), seasons.end());
  seasons.erase(
      std::remove_if(seasons.begin(), seasons.end(), [&](std::int64_t m) { return m > max_rows; }),
      seasons.end());
  return seasons;
}

}  // namespace tft
