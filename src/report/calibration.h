// Split-conformal calibration of the quantile forecasts (output.calibration: conformal).
//
// A model that overfits forecasts intervals that are too narrow: the quantile loss rewards
// confidence on the training windows. The correction is fitted after training, on the
// validation windows the model did not train on. For quantile level q and decoder step h, the
// residuals r = z - z_hat_q (target minus forecast, in the model's normalised units, so that
// series of any scale pool) give a shift d: the order statistic of rank ceil((n + 1) q) of the
// n residuals for q >= 0.5, floor((n + 1) q) for q < 0.5 (ranks clamped to [1, n]). That is
// one-sided split conformal prediction per quantile (the CQR of Romano et al. 2019 applies the
// same rank to an interval's two ends): on data exchangeable with the validation windows, the
// share of targets at or below z_hat_q + d is at least q for the upper quantiles and at most q
// for the lower ones, up to 1 / (n + 1).
//
// The median (q = 0.5) is not shifted: its shift is the validation period's bias, and on
// the four public sets of BENCHMARKS.md moving the median by it made the other half's P50
// q-risk worse in 7 of 8 cross-fitted cases (up to +18%), as these series drift over the
// period. The interval's ends are what the quantile loss gets wrong, and what is shifted.
//
// Shifts are per (step, quantile) when there are at least kMinWindowsPerStep validation
// windows, else one per quantile pooled over the steps. A calibrated forecast is z_hat + d,
// sorted across the quantiles (so they never cross), and back to original units as any
// forecast. The saved model keeps the shifts (calibration.json) and predict applies them.
//
// How well it works cannot be read off the windows it was fitted on. The summary reports it
// cross-fitted: the validation windows split in two by time (the earlier and the later half of
// the decoder starts), each half calibrated with the shifts fitted on the other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json_fwd.hpp>

#include "data/time_series_dataset.h"
#include "data/window_sampler.h"
#include "model/tft_model.h"
#include "report/metrics.h"

namespace tft {

class QuantileCalibration {
 public:
  static constexpr std::int64_t kMinWindowsPerStep = 30;
  static constexpr double kUnshiftedLevel = 0.5;  // the median (module comment)

  QuantileCalibration() = default;  // none: apply() returns its input

  // Fits the shifts on normalised forecasts [N, T, Q] and targets [N, T] (CPU, any float
  // dtype). N == 0 gives none.
  static QuantileCalibration fit(const at::Tensor& predictions, const at::Tensor& targets,
                                 const std::vector<double>& quantiles);

  bool empty() const { return shifts_.empty(); }
  // A normalised forecast [B, T, Q] shifted and sorted along the quantiles (float32 in, the
  // same dtype out); the input itself when empty.
  at::Tensor apply(const at::Tensor& prediction) const;

  const std::vector<double>& quantiles() const { return quantiles_; }
  std::int64_t steps() const { return steps_; }
  // [steps x quantiles], row-major: the shift of step h and quantile k at h * Q + k.
  const std::vector<double>& shifts() const { return shifts_; }
  std::int64_t windows() const { return windows_; }
  bool per_step() const { return per_step_; }

  // {"format": "tftrain-calibration", "version": 1, "method": "conformal", "quantiles": [...],
  //  "steps": T, "windows": N, "per_step": true, "shifts": [[...] per step]}
  nlohmann::json to_json() const;
  // DataError naming `where` and the key when the JSON is not such an object.
  static QuantileCalibration from_json(const nlohmann::json& json, const std::string& where);

 private:
  std::vector<double> quantiles_;
  std::int64_t steps_ = 0;
  std::vector<double> shifts_;
  std::int64_t windows_ = 0;
  bool per_step_ = false;
};

struct CalibrationResult {
  QuantileCalibration calibration;  // fitted on all the windows
  // The windows' metrics with each half calibrated by the other half's shifts; nothing when
  // a half would be empty (fewer than 2 distinct decoder starts).
  std::optional<ValidationMetrics> cross_fitted;
};

// Runs the model over `windows` (forecast.h's batches, eval mode) and fits the calibration,
// with its cross-fitted check.
CalibrationResult calibrate_conformal(TFTModel& model, const TimeSeriesDataset& dataset,
                                      const std::vector<Window>& windows, std::int64_t batch_size,
                                      const c10::Device& device);

// {"method": "conformal", "windows": N, "per_step": bool, "shifts": [[...]],
//  "cross_fitted": {validation metrics} or null}
nlohmann::ordered_json calibration_result_to_json(const CalibrationResult& result);

}  // namespace tft
