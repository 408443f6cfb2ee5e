#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_util.h"

namespace tft {

LrSchedule::LrSchedule(const LrScheduleConfig& config, double initial_learning_rate)
    : config_(config) {
  state_.learning_rate = initial_learning_rate;
}

double LrSchedule::step(double loss) {
  if (config_.kind == LrScheduleKind::None) return state_.learning_rate;
  const bool better = std::isinf(state_.best) ? loss < state_.best  // NaN never improves
                                              : loss < state_.best * (1.0 - config_.threshold);
  if (better) {
    state_.best = loss;
    state_.bad_epochs = 0;
  } else {
    ++state_.bad_epochs;
  }
  if (state_.cooldown_left > 0) {
    --state_.cooldown_left;
    state_.bad_epochs = 0;
  }
  if (state_.bad_epochs >= config_.patience) {
    const double reduced = std::max(state_.learning_rate * config_.factor, config_.min_lr);
    if (reduced < state_.learning_rate) ++state_.reductions;
    state_.learning_rate = reduced;
    state_.bad_epochs = 0;
    state_.cooldown_left = config_.cooldown;
  }
  return state_.learning_rate;
}

nlohmann::json LrSchedule::state_to_json(const State& state) {
  return {{"learning_rate", state.learning_rate},
          {"best", json_number(state.best)},
          {"bad_epochs", state.bad_epochs},
          {"reductions", state.reductions},
          {"cooldown_left", state.cooldown_left}};
}

LrSchedule::State LrSchedule::state_from_json(const nlohmann::json& json) {
  State s;
  s.learning_rate = json_get_number(json, "learning_rate", "lr_schedule");
  s.best = json_get_number_or_inf(json, "best", "lr_schedule");
  s.bad_epochs = json_get_int(json, "bad_epochs", "lr_schedule");
  s.reductions = json_get_int(json, "reductions", "lr_schedule");
  if (json.contains("cooldown_left")) {
    s.cooldown_left = json_get_int(json, "cooldown_left", "lr_schedule");
  }
  return s;
}

double warmup_factor(std::int64_t warmup_steps, std::int64_t step) {
  if (warmup_steps <= 0 || step + 1 >= warmup_steps) return 1.0;
  return static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
}

}  // namespace tft
