#include "report/calibration.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "common/error.h"
#include "data/batch.h"
#include "report/forecast.h"
#include "report/forecast_units.h"

namespace tft {

namespace {

// The conformal shift of level q from residuals sorted ascending (module comment).
double conformal_shift(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const double rank = q >= 0.5 ? std::ceil((n + 1.0) * q) : std::floor((n + 1.0) * q);
  const auto index = static_cast<std::size_t>(std::clamp(rank, 1.0, n)) - 1;
  return sorted[index];
}

// One validation batch as forecast.h runs it: the batch (CPU) and its normalised forecast.
struct BatchForecast {
  TrainingBatch batch;
  at::Tensor prediction;     // [B, T, Q] float32, CPU
  at::Tensor decoder_start;  // [B] int64: each window's first decoder row within its series
};

at::Tensor rows_where(const at::Tensor& values, const at::Tensor& mask) {
  return values.index_select(0, torch::nonzero(mask).squeeze(1));
}

}  // namespace

QuantileCalibration QuantileCalibration::fit(const at::Tensor& predictions,
                                             const at::Tensor& targets,
                                             const std::vector<double>& quantiles) {
  QuantileCalibration c;
  if (predictions.dim() != 3 || targets.dim() != 2 || predictions.size(0) != targets.size(0) ||
      predictions.size(1) != targets.size(1) ||
      predictions.size(2) != static_cast<std::int64_t>(quantiles.size())) {
    throw DataError(
        "conformal calibration: forecasts must be [N, T, Q] and targets [N, T] with Q " +
        std::to_string(quantiles.size()));
  }
  const std::int64_t n = predictions.size(0), steps = predictions.size(1);
  const auto q = static_cast<std::int64_t>(quantiles.size());
  if (n == 0) return c;
  // residual[i, h, k] = z[i, h] - z_hat[i, h, k], in double.
  const at::Tensor residuals =
      (targets.to(torch::kFloat64).unsqueeze(-1) - predictions.to(torch::kFloat64)).contiguous();
  const double* r = residuals.data_ptr<double>();
  c.quantiles_ = quantiles;
  c.steps_ = steps;
  c.windows_ = n;
  c.per_step_ = n >= kMinWindowsPerStep;
  c.shifts_.assign(static_cast<std::size_t>(steps * q), 0.0);
  std::vector<double> pool;
  for (std::int64_t k = 0; k < q; ++k) {
    const double level = quantiles[static_cast<std::size_t>(k)];
    if (level == kUnshiftedLevel) continue;  // the median keeps the model's forecast
    if (c.per_step_) {
      for (std::int64_t h = 0; h < steps; ++h) {
        pool.clear();
        for (std::int64_t i = 0; i < n; ++i) pool.push_back(r[(i * steps + h) * q + k]);
        std::sort(pool.begin(), pool.end());
        c.shifts_[static_cast<std::size_t>(h * q + k)] = conformal_shift(pool, level);
      }
    } else {
      pool.clear();
      for (std::int64_t i = 0; i < n * steps; ++i) pool.push_back(r[i * q + k]);
      std::sort(pool.begin(), pool.end());
      const double shift = conformal_shift(pool, level);
      for (std::int64_t h = 0; h < steps; ++h)
        c.shifts_[static_cast<std::size_t>(h * q + k)] = shift;
    }
  }
  return c;
}

at::Tensor QuantileCalibration::apply(const at::Tensor& prediction) const {
  if (empty()) return prediction;
  const auto q = static_cast<std::int64_t>(quantiles_.size());
  if (prediction.dim() != 3 || prediction.size(1) != steps_ || prediction.size(2) != q) {
    throw DataError("conformal calibration: fitted for forecasts of " + std::to_string(steps_) +
                    " steps and " + std::to_string(q) + " quantiles, got " +
                    std::to_string(prediction.dim() == 3 ? prediction.size(1) : -1) + " and " +
                    std::to_string(prediction.dim() == 3 ? prediction.size(2) : -1));
  }
  const at::Tensor shifts =
      torch::tensor(shifts_, torch::TensorOptions().dtype(torch::kFloat64)).view({1, steps_, q});
  const at::Tensor shifted = prediction.to(torch::kFloat64) + shifts.to(prediction.device());
  return std::get<0>(shifted.sort(/*dim=*/2)).to(prediction.scalar_type());
}

nlohmann::json QuantileCalibration::to_json() const {
  const auto q = quantiles_.size();
  nlohmann::json shifts = nlohmann::json::array();
  for (std::int64_t h = 0; h < steps_; ++h) {
    const auto begin =
        shifts_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(h) * q);
    shifts.push_back(std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(q)));
  }
  return nlohmann::json{
      {"format", "tftrain-calibration"}, {"version", 1},    {"method", "conformal"},
      {"quantiles", quantiles_},         {"steps", steps_}, {"windows", windows_},
      {"per_step", per_step_},           {"shifts", shifts}};
}

QuantileCalibration QuantileCalibration::from_json(const nlohmann::json& json,
                                                   const std::string& where) {
  const auto bad = [&](const std::string& what) { return DataError(where + ": " + what); };
  QuantileCalibration c;
  try {
    if (!json.is_object() || json.value("format", std::string()) != "tftrain-calibration" ||
        json.value("version", 0) != 1 || json.value("method", std::string()) != "conformal") {
      throw bad(
          "expected an object with \"format\": \"tftrain-calibration\", \"version\": 1, "
          "\"method\": \"conformal\"");
    }
    c.quantiles_ = json.at("quantiles").get<std::vector<double>>();
    c.steps_ = json.at("steps").get<std::int64_t>();
    c.windows_ = json.at("windows").get<std::int64_t>();
    c.per_step_ = json.at("per_step").get<bool>();
    const nlohmann::json& shifts = json.at("shifts");
    if (!shifts.is_array() || static_cast<std::int64_t>(shifts.size()) != c.steps_) {
      throw bad("shifts: expected " + std::to_string(c.steps_) + " rows (one per step)");
    }
    for (const nlohmann::json& row : shifts) {
      const std::vector<double> values = row.get<std::vector<double>>();
      if (values.size() != c.quantiles_.size()) {
        throw bad("shifts: expected " + std::to_string(c.quantiles_.size()) +
                  " values per step (one per quantile)");
      }
      for (const double v : values) {
        if (!std::isfinite(v)) throw bad("shifts: not a finite number");
      }
      c.shifts_.insert(c.shifts_.end(), values.begin(), values.end());
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(e.what());
  }
  if (c.steps_ < 1 || c.quantiles_.empty() || c.windows_ < 1) {
    throw bad("steps, quantiles and windows must be positive");
  }
  return c;
}

CalibrationResult calibrate_conformal(TFTModel& model, const TimeSeriesDataset& dataset,
                                      const std::vector<Window>& windows, std::int64_t batch_size,
                                      const c10::Device& device) {
  const std::vector<double>& quantiles = model->config().quantiles;
  std::vector<BatchForecast> forecasts;
  std::size_t next = 0;
  for_each_batch_output(model, dataset, windows, batch_size, device,
                        [&](const TrainingBatch& batch, const TFTOutput& output) {
                          BatchForecast f;
                          f.batch = batch.to(c10::Device(c10::kCPU));
                          f.prediction = output.prediction.detach().to(torch::kCPU).contiguous();
                          const std::int64_t b = f.prediction.size(0);
                          f.decoder_start = torch::empty({b}, torch::kInt64);
                          for (std::int64_t i = 0; i < b; ++i, ++next) {
                            f.decoder_start[i] = static_cast<std::int64_t>(
                                windows[next].start + dataset.encoder_length());
                          }
                          forecasts.push_back(std::move(f));
                        });
  CalibrationResult result;
  if (forecasts.empty()) return result;
  std::vector<at::Tensor> predictions, targets, starts;
  for (const BatchForecast& f : forecasts) {
    predictions.push_back(f.prediction);
    targets.push_back(f.batch.targets);
    starts.push_back(f.decoder_start);
  }
  const at::Tensor all_predictions = torch::cat(predictions);
  const at::Tensor all_targets = torch::cat(targets);
  result.calibration = QuantileCalibration::fit(all_predictions, all_targets, quantiles);

  // Cross-fitted: the windows whose decoder starts before the median start, and the others,
  // each calibrated with the shifts fitted on the other half.
  const at::Tensor all_starts = torch::cat(starts);
  const std::int64_t median =
      std::get<0>(all_starts.sort()).select(0, all_starts.size(0) / 2).item<std::int64_t>();
  const at::Tensor early = all_starts < median;
  const std::int64_t early_count = early.sum().item<std::int64_t>();
  if (early_count == 0 || early_count == all_starts.size(0)) return result;
  const QuantileCalibration from_early = QuantileCalibration::fit(
      rows_where(all_predictions, early), rows_where(all_targets, early), quantiles);
  const QuantileCalibration from_late =
      QuantileCalibration::fit(rows_where(all_predictions, early.logical_not()),
                               rows_where(all_targets, early.logical_not()), quantiles);
  MetricAccumulator metrics(quantiles);
  for (const BatchForecast& f : forecasts) {
    const at::Tensor is_early = (f.decoder_start < median).view({-1, 1, 1});
    const at::Tensor calibrated =
        torch::where(is_early, from_late.apply(f.prediction), from_early.apply(f.prediction));
    metrics.add(calibrated, f.batch.targets,
                forecast_in_original_units(dataset, f.batch, calibrated, quantiles),
                unscale_target(dataset, f.batch, f.batch.targets));
  }
  result.cross_fitted = metrics.result();
  return result;
}

nlohmann::ordered_json calibration_result_to_json(const CalibrationResult& result) {
  nlohmann::ordered_json j;
  const QuantileCalibration& c = result.calibration;
  j["method"] = "conformal";
  j["windows"] = c.windows();
  j["per_step"] = c.per_step();
  j["shifts"] = c.to_json()["shifts"];
  j["cross_fitted"] = result.cross_fitted ? validation_metrics_to_json(*result.cross_fitted)
                                          : nlohmann::ordered_json();
  return j;
}

}  // namespace tft
