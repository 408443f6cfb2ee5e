// A quantile forecast in original units, as every output gives it: forecasts, the validation
// metrics, the calibration's cross-fitted check and a saved model's predictions.
//
// The normalised forecast goes back through the target's normalisation (data/batch.h's
// unscale_target). Where the fitted transforms say so (DataTransforms::whole_number_median,
// from output.median_rounding), the median then becomes the nearest whole number.
//
// Why the median, and only it: the median of a whole-number quantity is itself a whole
// number, and a median a fraction of a unit off loses that fraction wherever the count comes
// out exactly as forecast. On the public flight panels, where 71% of the validation hours
// repeat last week's count exactly, that fraction was the whole gap to the weekly seasonal
// naive (BENCHMARKS.md, "Whole-number medians"). The interval's ends stay as they are: rounded
// too, the closed P10-P90 interval held 87-95% of the outcomes on the count sets, where 80% is
// the aim. Rounding never makes quantiles cross: the median goes no further than its
// neighbour, so where no whole number lies between them it stays a fraction inside.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "data/batch.h"
#include "data/time_series_dataset.h"

namespace tft {

// `prediction` [B, T_dec, Q] normalised like batch's target (any device, float dtype) in
// original units, `quantiles` the model's (ascending): unscale_target, then the median whole
// where dataset.transforms().whole_number_median.
at::Tensor forecast_in_original_units(const TimeSeriesDataset& dataset, const TrainingBatch& batch,
                                      const at::Tensor& prediction,
                                      const std::vector<double>& quantiles);

// `forecast` [..., Q] with the 0.5 quantile's values rounded to the nearest whole number (ties
// to even), going no further than the quantile beside it in that direction, and not at all
// where that quantile is on the median's other side already; the input itself when
// `quantiles` has no 0.5.
at::Tensor round_median_to_whole_numbers(const at::Tensor& forecast,
                                         const std::vector<double>& quantiles);

}  // namespace tft
