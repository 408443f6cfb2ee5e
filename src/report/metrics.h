// Forecast quality per epoch.
//
//   loss        the quantile (pinball) loss the model minimises, averaged over windows,
//               horizon steps and quantiles, on the scaled target (model/quantile_loss.h)
//   q-risk      the TFT paper's normalised quantile risk (Lim et al. 2021, section 7):
//               R_q = 2 * sum QL_q(y, y_hat_q) / sum |y| over every window and horizon step,
//               with QL_q(y, y_hat) = max(q (y - y_hat), (q - 1)(y - y_hat)), in ORIGINAL
//               units (predictions and targets unscaled with their series' statistics, the
//               median whole where report/forecast_units.h says so); given for P50 and P90
//               when the model forecasts those quantiles
//   MAE P50     mean |y - y_hat_0.5| in original units
//   coverage    per quantile q: the fraction of targets at or below the forecast y_hat_q (a
//               calibrated forecast has coverage q)
//   interval coverage  the fraction of targets between the lowest and the highest quantile's
//               forecasts, both included (P10-P90: 80% when calibrated)
//
// Sums are accumulated in double, in batch order, so a run's metrics are reproducible.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

namespace tft {

struct ValidationMetrics {
  double loss = std::numeric_limits<double>::quiet_NaN();
  double q_risk_p50 = std::numeric_limits<double>::quiet_NaN();  // NaN: no 0.5 quantile
  double q_risk_p90 = std::numeric_limits<double>::quiet_NaN();  // NaN: no 0.9 quantile
  double mae_p50 = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> coverage;  // one per quantile, in the model's order; empty: none
  double interval_coverage = std::numeric_limits<double>::quiet_NaN();  // NaN: < 2 quantiles
  std::int64_t windows = 0;  // 0: no validation set (every figure NaN)
};

// One epoch of training.
struct EpochMetrics {
  std::int64_t epoch = 0;  // 1-based
  double train_loss = std::numeric_limits<double>::quiet_NaN();
  ValidationMetrics validation;
  double learning_rate = 0.0;  // the rate used during this epoch
  double seconds = 0.0;        // wall time of the training steps (validation excluded)
  double samples_per_second = 0.0;
  std::int64_t peak_activation_bytes = 0;  // largest step of the epoch (memory_meter.h)
  bool best = false;                       // this epoch set a new best monitored loss
  std::int64_t steps = 0;                  // optimizer steps this epoch
  double allreduce_seconds = 0.0;          // of `seconds`, spent averaging gradients across ranks
};

// The index of quantile `q` in `quantiles` (|difference| < 1e-9), or nothing.
std::optional<std::size_t> quantile_index(const std::vector<double>& quantiles, double q);

class MetricAccumulator {
 public:
  explicit MetricAccumulator(std::vector<double> quantiles);

  // prediction [B, T, Q] and target [B, T] on the scaled target (the loss), and the same in
  // original units (the q-risk and MAE). Any device; any floating dtype.
  void add(const at::Tensor& prediction, const at::Tensor& target,
           const at::Tensor& prediction_original, const at::Tensor& target_original);

  std::int64_t windows() const { return windows_; }
  ValidationMetrics result() const;

  // The running sums and counts as numbers (counts are exact in a double up to 2^53), for
  // adding up the accumulators of several processes; set_totals takes such a sum back.
  std::vector<double> totals() const;
  void set_totals(const std::vector<double>& totals);

 private:
  std::vector<double> quantiles_;
  std::optional<std::size_t> p50_, p90_;
  at::Tensor quantile_levels_;  // [Q] double, CPU
  double loss_sum_ = 0.0;
  std::int64_t loss_count_ = 0;  // elements x quantiles
  double ql50_sum_ = 0.0, ql90_sum_ = 0.0, abs_target_sum_ = 0.0, abs_error50_sum_ = 0.0;
  std::vector<double> at_or_below_;  // per quantile: targets at or below its forecast
  double inside_interval_ = 0.0;     // targets between the lowest and highest quantile
  std::int64_t points_ = 0;          // elements (windows x horizon steps)
  std::int64_t windows_ = 0;
};

// JSON of one epoch, as written to metrics.jsonl (NaN figures as null):
// {"epoch", "train_loss", "validation_loss", "q_risk_p50", "q_risk_p90", "mae_p50",
//  "coverage", "interval_coverage", "validation_windows", "learning_rate", "seconds",
//  "samples_per_second", "peak_activation_bytes", "best", "steps", "allreduce_seconds"};
// "coverage" is a list in the model's quantile order. Files written before "coverage",
// "interval_coverage", "steps" and "allreduce_seconds" existed read as empty, NaN, 0 and 0.
nlohmann::ordered_json epoch_metrics_to_json(const EpochMetrics& metrics);
// Reads that JSON back (IoError when a key is missing or mistyped).
EpochMetrics epoch_metrics_from_json(const nlohmann::json& json);
// {"loss", "q_risk_p50", "q_risk_p90", "mae_p50", "coverage", "interval_coverage", "windows"}
nlohmann::ordered_json validation_metrics_to_json(const ValidationMetrics& metrics);

}  // namespace tft
