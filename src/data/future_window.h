// The window after the data: for each series, the encoder is its last encoder_length rows and
// the decoder the prediction_length steps that follow, whose actuals are unknown. The dataset's
// windows never reach past a series' last row, so this batch is gathered here, with the same
// scaling and codes as TimeSeriesDataset::fill_sample (bitwise the same encoder inputs).
//
// What the decoder needs but the data cannot give:
//   times       the last time plus the series' usual step (the most frequent difference
//               between consecutive times among its last 256 rows); for dates with a one-day
//               step in a series that has no Saturday or Sunday row, weekends are skipped
//               (business days; holidays are not known)
//   calendar    known day_of_week / month / day_of_month / hour inputs computed from those
//               times, when the stored column agrees with the calendar on the series' last
//               rows (so a CSV column of that name that means something else is not
//               recomputed); relative_time_idx as in every window
//   other known inputs (prices, promotions, ...): their last observed value is carried
//               forward, since the file holds no future values for them
// Targets are NaN.
#pragma once

#include <cstdint>
#include <vector>

#include "data/batch.h"
#include "data/seasonality.h"
#include "data/time_series_dataset.h"

namespace tft {

// Times of the prediction_length steps after the last row of `series` (see above).
std::vector<std::int64_t> future_times(const TimeSeriesDataset& dataset, std::size_t series);

// One sample per entry of `series` (indices into dataset.series()), as gather_batch lays them
// out; targets NaN, decoder_times from future_times().
TrainingBatch gather_future_batch(const TimeSeriesDataset& dataset,
                                  const std::vector<std::uint32_t>& series);

}  // namespace tft
