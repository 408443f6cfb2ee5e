#include "report/metrics.h"

#include <cmath>
#include <limits>
#include <utility>

#include <ATen/ops/abs.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/tensor.h>
#include <nlohmann/json.hpp>
#include <torch/utils.h>

#include "common/error.h"
#include "common/json_util.h"

namespace tft {

std::optional<std::size_t> quantile_index(const std::vector<double>& quantiles, double q) {
  for (std::size_t i = 0; i < quantiles.size(); ++i) {
    if (std::fabs(quantiles[i] - q) < 1e-9) return i;
  }
  return std::nullopt;
}

MetricAccumulator::MetricAccumulator(std::vector<double> quantiles)
    : quantiles_(std::move(quantiles)),
      p50_(quantile_index(quantiles_, 0.5)),
      p90_(quantile_index(quantiles_, 0.9)),
      quantile_levels_(at::tensor(quantiles_, at::kDouble)),
      at_or_below_(quantiles_.size(), 0.0) {}

namespace {

// Indices of the lowest and the highest quantile level.
std::pair<std::size_t, std::size_t> outer_quantiles(const std::vector<double>& quantiles) {
  std::size_t lowest = 0, highest = 0;
  for (std::size_t i = 1; i < quantiles.size(); ++i) {
    if (quantiles[i] < quantiles[lowest]) lowest = i;
    if (quantiles[i] > quantiles[highest]) highest = i;
  }
  return {lowest, highest};
}

// Pinball loss of every element, [B, T, Q] (double).
at::Tensor pinball(const at::Tensor& prediction, const at::Tensor& target,
                   const at::Tensor& levels) {
  const at::Tensor error = target.unsqueeze(-1) - prediction;
  return at::maximum(levels * error, (levels - 1.0) * error);
}

}  // namespace

void MetricAccumulator::add(const at::Tensor& prediction, const at::Tensor& target,
                            const at::Tensor& prediction_original,
                            const at::Tensor& target_original) {
  torch::NoGradGuard no_grad;
  if (target.size(0) == 0) return;
  const at::Tensor p = prediction.detach().to(at::kCPU, at::kDouble);
  const at::Tensor y = target.detach().to(at::kCPU, at::kDouble);
  loss_sum_ += pinball(p, y, quantile_levels_).sum().item<double>();
  loss_count_ += p.numel();

  const at::Tensor po = prediction_original.detach().to(at::kCPU, at::kDouble);
  const at::Tensor yo = target_original.detach().to(at::kCPU, at::kDouble);
  abs_target_sum_ += at::abs(yo).sum().item<double>();
  points_ += yo.numel();
  windows_ += y.size(0);
  auto quantile_loss_sum = [&](std::size_t index) {
    const at::Tensor level = quantile_levels_.narrow(0, static_cast<std::int64_t>(index), 1);
    const at::Tensor column = po.select(-1, static_cast<std::int64_t>(index)).unsqueeze(-1);
    return pinball(column, yo, level).sum().item<double>();
  };
  if (p50_) {
    ql50_sum_ += quantile_loss_sum(*p50_);
    abs_error50_sum_ +=
        at::abs(yo - po.select(-1, static_cast<std::int64_t>(*p50_))).sum().item<double>();
  }
  if (p90_) ql90_sum_ += quantile_loss_sum(*p90_);
  // Calibration: how often the target falls at or below each quantile's forecast.
  const at::Tensor at_or_below = (yo.unsqueeze(-1) <= po);  // [B, T, Q]
  for (std::size_t q = 0; q < quantiles_.size(); ++q) {
    at_or_below_[q] += at_or_below.select(-1, static_cast<std::int64_t>(q)).sum().item<double>();
  }
  if (quantiles_.size() >= 2) {
    const auto [lowest, highest] = outer_quantiles(quantiles_);
    const at::Tensor inside =
        (po.select(-1, static_cast<std::int64_t>(lowest)) <= yo)
            .logical_and(yo <= po.select(-1, static_cast<std::int64_t>(highest)));
    inside_interval_ += inside.sum().item<double>();
  }
}

std::vector<double> MetricAccumulator::totals() const {
  std::vector<double> totals{loss_sum_,
                             static_cast<double>(loss_count_),
                             ql50_sum_,
                             ql90_sum_,
                             abs_target_sum_,
                             abs_error50_sum_,
                             static_cast<double>(points_),
                             static_cast<double>(windows_),
                             inside_interval_};
  totals.insert(totals.end(), at_or_below_.begin(), at_or_below_.end());
  return totals;
}

void MetricAccumulator::set_totals(const std::vector<double>& totals) {
  if (totals.size() != 9 + quantiles_.size()) {
    throw InvalidArgumentError("MetricAccumulator::set_totals: expected " +
                               std::to_string(9 + quantiles_.size()) + " numbers, got " +
                               std::to_string(totals.size()));
  }
  loss_sum_ = totals[0];
  loss_count_ = static_cast<std::int64_t>(totals[1]);
  ql50_sum_ = totals[2];
  ql90_sum_ = totals[3];
  abs_target_sum_ = totals[4];
  abs_error50_sum_ = totals[5];
  points_ = static_cast<std::int64_t>(totals[6]);
  windows_ = static_cast<std::int64_t>(totals[7]);
  inside_interval_ = totals[8];
  at_or_below_.assign(totals.begin() + 9, totals.end());
}

ValidationMetrics MetricAccumulator::result() const {
  ValidationMetrics m;
  m.windows = windows_;
  if (windows_ == 0) return m;
  m.loss = loss_sum_ / static_cast<double>(loss_count_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // A q-risk over targets that are all zero is undefined.
  const double denominator = abs_target_sum_ > 0.0 ? abs_target_sum_ : nan;
  if (p50_) {
    m.q_risk_p50 = 2.0 * ql50_sum_ / denominator;
    m.mae_p50 = abs_error50_sum_ / static_cast<double>(points_);
  }
  if (p90_) m.q_risk_p90 = 2.0 * ql90_sum_ / denominator;
  const auto points = static_cast<double>(points_);
  for (const double count : at_or_below_) m.coverage.push_back(count / points);
  if (quantiles_.size() >= 2) m.interval_coverage = inside_interval_ / points;
  return m;
}

namespace {

template <typename J>
J coverage_json(const std::vector<double>& coverage) {
  J list = J::array();
  for (const double value : coverage) list.push_back(json_number<J>(value));
  return list;
}

}  // namespace

nlohmann::ordered_json validation_metrics_to_json(const ValidationMetrics& m) {
  using J = nlohmann::ordered_json;
  J j;
  j["loss"] = json_number<J>(m.loss);
  j["q_risk_p50"] = json_number<J>(m.q_risk_p50);
  j["q_risk_p90"] = json_number<J>(m.q_risk_p90);
  j["mae_p50"] = json_number<J>(m.mae_p50);
  j["coverage"] = coverage_json<J>(m.coverage);
  j["interval_coverage"] = json_number<J>(m.interval_coverage);
  j["windows"] = m.windows;
  return j;
}

nlohmann::ordered_json epoch_metrics_to_json(const EpochMetrics& m) {
  using J = nlohmann::ordered_json;
  J j;
  j["epoch"] = m.epoch;
  j["train_loss"] = json_number<J>(m.train_loss);
  j["validation_loss"] = json_number<J>(m.validation.loss);
  j["q_risk_p50"] = json_number<J>(m.validation.q_risk_p50);
  j["q_risk_p90"] = json_number<J>(m.validation.q_risk_p90);
  j["mae_p50"] = json_number<J>(m.validation.mae_p50);
  j["coverage"] = coverage_json<J>(m.validation.coverage);
  j["interval_coverage"] = json_number<J>(m.validation.interval_coverage);
  j["validation_windows"] = m.validation.windows;
  j["learning_rate"] = m.learning_rate;
  j["seconds"] = m.seconds;
  j["samples_per_second"] = m.samples_per_second;
  j["peak_activation_bytes"] = m.peak_activation_bytes;
  j["best"] = m.best;
  j["steps"] = m.steps;
  j["allreduce_seconds"] = m.allreduce_seconds;
  return j;
}

EpochMetrics epoch_metrics_from_json(const nlohmann::json& j) {
  const std::string where = "epoch metrics";
  EpochMetrics m;
  m.epoch = json_get_int(j, "epoch", where);
  m.train_loss = json_get_number_or_nan(j, "train_loss", where);
  m.validation.loss = json_get_number_or_nan(j, "validation_loss", where);
  m.validation.q_risk_p50 = json_get_number_or_nan(j, "q_risk_p50", where);
  m.validation.q_risk_p90 = json_get_number_or_nan(j, "q_risk_p90", where);
  m.validation.mae_p50 = json_get_number_or_nan(j, "mae_p50", where);
  m.validation.windows = json_get_int(j, "validation_windows", where);
  if (j.contains("coverage")) {
    const nlohmann::json& coverage = json_get(j, "coverage", where);
    if (!coverage.is_array()) throw IoError(where + ": key 'coverage': expected a list");
    for (const auto& value : coverage) {
      m.validation.coverage.push_back(value.is_number() ? value.get<double>()
                                                        : std::numeric_limits<double>::quiet_NaN());
    }
  }
  if (j.contains("interval_coverage")) {
    m.validation.interval_coverage = json_get_number_or_nan(j, "interval_coverage", where);
  }
  m.learning_rate = json_get_number(j, "learning_rate", where);
  m.seconds = json_get_number(j, "seconds", where);
  m.samples_per_second = json_get_number(j, "samples_per_second", where);
  m.peak_activation_bytes = json_get_int(j, "peak_activation_bytes", where);
  const nlohmann::json& best = json_get(j, "best", where);
  if (!best.is_boolean()) throw IoError(where + ": key 'best': expected a boolean");
  m.best = best.get<bool>();
  if (j.contains("steps")) m.steps = json_get_int(j, "steps", where);
  if (j.contains("allreduce_seconds")) {
    m.allreduce_seconds = json_get_number(j, "allreduce_seconds", where);
  }
  return m;
}

}  // namespace tft
