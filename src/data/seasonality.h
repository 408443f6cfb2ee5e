// A series' time step and the season it implies, and the seasonal naive forecast's row: what
// the seasonal baseline (train/baselines.h) and the seasonal target center
// (data.target_normalizer.center: seasonal) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/time_series_dataset.h"

namespace tft {

// A series' usual time step (the most frequent difference between consecutive times among
// its last 256 rows; microseconds for ISO 8601 times), and whether it is a daily series
// without weekend rows (business days).
struct SeriesTimeStep {
  std::int64_t step = 1;
  bool business_days = false;
};
SeriesTimeStep series_time_step(const TimeSeriesDataset& dataset, std::size_t series);

// Whether the first series steps by less than a day (ISO 8601 times only; integer times have
// no known unit).
bool is_sub_daily(const TimeSeriesDataset& dataset);

// 0 = Monday ... 6 = Sunday of an instant (its UTC date).
int weekday_of(std::int64_t micros);

// The seasonality in rows inferred from the first series' time step: 24 for hourly data, a day
// of rows for other steps that divide the day (48 for half-hourly), 7 for daily, 5 for
// business-daily; 0 for other steps and integer times. `source` says how, or why
// not ("hourly data", "integer times have no known season; set model.seasonality").
std::int64_t infer_seasonality(const TimeSeriesDataset& dataset, std::string& source);

// Every season worth a seasonal naive forecast, ascending and without repeats: `season` (the
// configured or inferred one; left out when 0), and for sub-daily data whose step divides a
// day, the day and the week in rows (24 and 168 for hourly data). Seasons longer than
// `max_rows` (the encoder, where the values are read) are left out.
std::vector<std::int64_t> candidate_seasons(const TimeSeriesDataset& dataset, std::int64_t season,
                                            std::int64_t max_rows);

// The row of the seasonal naive forecast of decoder step h (0-based) for a window whose last
// encoder row is `last`: the row m * ceil((h + 1) / m) before step h's own row, which lies in
// the encoder when m <= encoder_length.
inline std::size_t seasonal_naive_row(std::size_t last, std::int64_t h, std::int64_t m) {
  const std::int64_t seasons_back = (h + m) / m;  // ceil((h + 1) / m)
  return last + 1 + static_cast<std::size_t>(h) - static_cast<std::size_t>(seasons_back * m);
}

}  // namespace tft
