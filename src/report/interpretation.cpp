#include "report/interpretation.h"

#include <ATen/ops/zeros.h>
#include <torch/utils.h>

namespace tft {

namespace {

std::vector<VariableImportance> importances(const std::vector<std::string>& names,
                                            const at::Tensor& sum, double count) {
  std::vector<VariableImportance> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double value = count > 0 ? sum[static_cast<std::int64_t>(i)].item<double>() / count : 0.0;
    out.push_back({names[i], value});
  }
  return out;
}

nlohmann::ordered_json importance_json(const std::vector<VariableImportance>& list) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const VariableImportance& v : list) j[v.variable] = v.importance;
  return j;
}

}  // namespace

InterpretationAccumulator::InterpretationAccumulator(const ModelConfig& config) : config_(config) {
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const auto count = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
  static_sum_ = at::zeros({count(config.schema.static_variables())}, options);
  encoder_sum_ = at::zeros({count(config.schema.historical_variables())}, options);
  decoder_sum_ = at::zeros({count(config.schema.future_variables())}, options);
  attention_sum_ = at::zeros(
      {config.prediction_length, config.encoder_length + config.prediction_length}, options);
}

void InterpretationAccumulator::add(const TFTOutput& output) {
  static const std::int64_t kBatchAndTime[] = {0, 1};
  torch::NoGradGuard no_grad;
  const std::int64_t b = output.prediction.size(0);
  if (b == 0) return;
  windows_ += b;
  auto cpu = [](const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); };
  if (static_sum_.numel() > 0) static_sum_ += cpu(output.static_weights).sum(0);
  if (encoder_sum_.numel() > 0)
    encoder_sum_ += cpu(output.encoder_weights).sum(at::IntArrayRef(kBatchAndTime));
  if (decoder_sum_.numel() > 0)
    decoder_sum_ += cpu(output.decoder_weights).sum(at::IntArrayRef(kBatchAndTime));
  if (output.attention.defined()) attention_sum_ += cpu(output.attention).sum(0);
}

Interpretation InterpretationAccumulator::result() const {
  Interpretation r;
  r.windows = windows_;
  r.encoder_length = config_.encoder_length;
  r.prediction_length = config_.prediction_length;
  const auto w = static_cast<double>(windows_);
  const auto& schema = config_.schema;
  r.static_importance = importances(schema.static_variables(), static_sum_, w);
  r.encoder_importance = importances(schema.historical_variables(), encoder_sum_,
                                     w * static_cast<double>(config_.encoder_length));
  r.decoder_importance = importances(schema.future_variables(), decoder_sum_,
                                     w * static_cast<double>(config_.prediction_length));
  const std::int64_t steps = config_.encoder_length + config_.prediction_length;
  r.attention_by_position.assign(static_cast<std::size_t>(steps), 0.0);
  for (std::int64_t h = 0; h < config_.prediction_length; ++h) {
    std::vector<double> row(static_cast<std::size_t>(steps), 0.0);
    for (std::int64_t k = 0; k < steps; ++k) {
      const double value = windows_ > 0 ? attention_sum_[h][k].item<double>() / w : 0.0;
      row[static_cast<std::size_t>(k)] = value;
      r.attention_by_position[static_cast<std::size_t>(k)] +=
          value / static_cast<double>(config_.prediction_length);
    }
    r.attention_by_horizon.push_back(std::move(row));
  }
  return r;
}

nlohmann::ordered_json Interpretation::to_json() const {
  nlohmann::ordered_json j;
  j["windows"] = windows;
  j["encoder_length"] = encoder_length;
  j["prediction_length"] = prediction_length;
  j["static_importance"] = importance_json(static_importance);
  j["encoder_importance"] = importance_json(encoder_importance);
  j["decoder_importance"] = importance_json(decoder_importance);
  std::vector<std::int64_t> positions;
  for (std::int64_t k = 0; k < encoder_length + prediction_length; ++k) {
    positions.push_back(k - encoder_length);
  }
  nlohmann::ordered_json attention;
  attention["positions"] = positions;
  attention["mean"] = attention_by_position;
  attention["by_horizon"] = attention_by_horizon;
  j["attention"] = attention;
  return j;
}

}  // namespace tft
