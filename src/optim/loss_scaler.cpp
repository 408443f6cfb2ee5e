#include "optim/loss_scaler.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>
#include <ATen/ops/full.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/zeros.h>

#include "common/error.h"
#include "common/json_util.h"

namespace tft {

nlohmann::json loss_scaler_state_to_json(const LossScalerState& state) {
  nlohmann::json j;
  j["scale"] = state.scale;
  j["growth_tracker"] = state.growth_tracker;
  return j;
}

LossScalerState loss_scaler_state_from_json(const nlohmann::json& j, const std::string& where) {
  const std::string here = where + ": loss_scaler";
  LossScalerState state;
  state.scale = json_get_number(j, "scale", here);
  state.growth_tracker = json_get_int(j, "growth_tracker", here);
  if (!(state.scale > 0.0) || state.growth_tracker < 0) {
    throw IoError(here + ": scale " + std::to_string(state.scale) + ", growth_tracker " +
                  std::to_string(state.growth_tracker) + " are not a loss scaler's state");
  }
  return state;
}

LossScaler::LossScaler(c10::Device device, LossScalerOptions options) : options_(options) {
  const auto on_device = at::TensorOptions().device(device);
  scale_ = at::full({1}, options_.init_scale, on_device.dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, on_device.dtype(at::kInt));
  found_inf_ = at::zeros({1}, on_device.dtype(at::kFloat));
}

at::Tensor LossScaler::scale(const at::Tensor& loss) const {
  return loss * scale_.to(loss.dtype());
}

void LossScaler::unscale(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> gradients;
  for (const at::Tensor& p : parameters) {
    if (p.grad().defined()) gradients.push_back(p.grad());
  }
  found_inf_.zero_();
  // The reciprocal in float32, as GradScaler computes it (scale_.double().reciprocal().float()).
  const at::Tensor inverse = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  at::_amp_foreach_non_finite_check_and_unscale_(gradients, found_inf_, inverse);
}

bool LossScaler::step_allowed() { return found_inf_.item<float>() == 0.0f; }

void LossScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
}

double LossScaler::current_scale() const { return scale_.item<float>(); }

LossScalerState LossScaler::state() const {
  return {current_scale(), static_cast<std::int64_t>(growth_tracker_.item<int>())};
}

void LossScaler::set_state(const LossScalerState& state) {
  scale_.fill_(state.scale);
  growth_tracker_.fill_(state.growth_tracker);
}

}  // namespace tft
