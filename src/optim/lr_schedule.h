// The learning-rate schedule: reduce on plateau (as torch.optim.lr_scheduler.ReduceLROnPlateau
// in mode "min", threshold_mode "rel"), or a constant rate.
//
// After each epoch the trainer reports the monitored loss (validation loss, or training loss
// without a validation set). A loss below best * (1 - threshold) becomes the best and resets
// the count of bad epochs; any other counts one, except during the `cooldown` epochs after a
// reduction, which count nothing. After `patience` bad epochs in a row the rate becomes
// max(rate * factor, min_lr) and the count starts again. (PyTorch reduces after patience + 1.)
// The state is plain data so a snapshot can store and restore it. A warm-up (warmup_factor,
// below) multiplies the rate of a run's first steps: step k trains at learning_rate() times
// warmup_factor(warmup_steps, k), and the plateau logic reduces learning_rate(), the rate the
// warm-up rises to.
#pragma once

#include <cstdint>
#include <limits>

#include <nlohmann/json_fwd.hpp>

#include "config/train_config.h"

namespace tft {

class LrSchedule {
 public:
  struct State {
    double learning_rate = 0.0;
    double best = std::numeric_limits<double>::infinity();
    std::int64_t bad_epochs = 0;
    std::int64_t reductions = 0;
    std::int64_t cooldown_left = 0;  // epochs of cooldown still to come
  };

  LrSchedule(const LrScheduleConfig& config, double initial_learning_rate);

  // Records one epoch's loss; returns the learning rate for the next epoch.
  double step(double loss);

  double learning_rate() const { return state_.learning_rate; }
  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

  // {"learning_rate": ..., "best": ... (null while infinite), "bad_epochs": ..., "reductions": ...,
  //  "cooldown_left": ...} (cooldown_left absent in older snapshots: 0)
  static nlohmann::json state_to_json(const State& state);
  // ConfigError when a field is missing or has the wrong type.
  static State state_from_json(const nlohmann::json& json);

 private:
  LrScheduleConfig config_;
  State state_;
};

// The linear warm-up (training.lr_warmup_steps, as PyTorch's LinearLR from 1 / warmup_steps
// to 1): the factor on the learning rate of the run's step `step` (0-based, counted over the
// run from its first epoch, resumed or not), (step + 1) / warmup_steps for the first
// warmup_steps steps, then 1; always 1 when warmup_steps is 0. A function of the step alone,
// so a resumed run continues the warm-up exactly.
double warmup_factor(std::int64_t warmup_steps, std::int64_t step);

}  // namespace tft
