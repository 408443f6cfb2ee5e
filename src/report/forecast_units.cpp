#include "report/forecast_units.h"

#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/round.h>
#include <ATen/ops/where.h>

#include "report/metrics.h"

namespace tft {

at::Tensor round_median_to_whole_numbers(const at::Tensor& forecast,
                                         const std::vector<double>& quantiles) {
  const std::optional<std::size_t> median_index = quantile_index(quantiles, 0.5);
  if (!median_index) return forecast;
  const auto k = static_cast<std::int64_t>(*median_index);
  const auto q = static_cast<std::int64_t>(quantiles.size());
  at::Tensor out = forecast.clone();
  const at::Tensor median = out.select(-1, k);
  const at::Tensor rounded = median.round();
  // Rounding up can only cross the quantile above, and rounding down the one below: each goes
  // at most as far as that neighbour. The model's own quantiles may already cross the median
  // (calibration sorts them, the model does not); the median then stays where it is rather
  // than follow that neighbour.
  at::Tensor moved = rounded;
  if (k + 1 < q) {
    const at::Tensor above = out.select(-1, k + 1);
    moved = at::where(rounded > median, at::maximum(median, at::minimum(rounded, above)), moved);
  }
  if (k > 0) {
    const at::Tensor below = out.select(-1, k - 1);
    moved = at::where(rounded < median, at::minimum(median, at::maximum(rounded, below)), moved);
  }
  median.copy_(moved);
  return out;
}

at::Tensor forecast_in_original_units(const TimeSeriesDataset& dataset, const TrainingBatch& batch,
                                      const at::Tensor& prediction,
                                      const std::vector<double>& quantiles) {
  const at::Tensor original = unscale_target(dataset, batch, prediction);
  return dataset.transforms().whole_number_median
             ? round_median_to_whole_numbers(original, quantiles)
             : original;
}

}  // namespace tft
