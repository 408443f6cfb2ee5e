// Dynamic loss scaling for float16 training (training.precision: 16-mixed), with
// torch.amp.GradScaler's semantics and defaults: the loss is multiplied by `scale` before
// backward so that small gradients survive float16; before clipping the gradients are divided
// by it again and checked; a step whose gradients hold an inf or NaN is skipped and the scale
// halved (backoff_factor), and after growth_interval steps in a row without one it doubles
// (growth_factor). The update is ATen's own kernel (_amp_update_scale_), so the numbers are
// GradScaler's bit for bit.
//
// Like GradScaler's non-fused path, step_allowed() reads one flag back to the host per step,
// after backward: the skip decision is the host's. Its state goes into snapshots
// (LossScalerState), so a resumed run scales exactly as the uninterrupted one.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace tft {

// What a snapshot keeps: the scale and the count of steps since the last inf/NaN.
struct LossScalerState {
  double scale = 65536.0;
  std::int64_t growth_tracker = 0;
};

nlohmann::json loss_scaler_state_to_json(const LossScalerState& state);
// IoError naming `where` for a missing or malformed field.
LossScalerState loss_scaler_state_from_json(const nlohmann::json& j, const std::string& where);

struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  LossScaler(c10::Device device, LossScalerOptions options = {});

  // loss * scale, for backward.
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides every defined gradient by the scale, in place, and records whether any holds an
  // inf or NaN; call once per step, after backward and any gradient reduction.
  void unscale(const std::vector<at::Tensor>& parameters);
  // Whether the step may run (no inf or NaN found by unscale); reads one flag from the device.
  bool step_allowed();
  // After the step (taken or skipped): grow or back off the scale.
  void update();

  double current_scale() const;
  LossScalerState state() const;
  void set_state(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  at::Tensor scale_;           // float32 [1] on the device
  at::Tensor growth_tracker_;  // int32 [1] on the device
  at::Tensor found_inf_;       // float32 [1] on the device: this step's flag
};

}  // namespace tft
