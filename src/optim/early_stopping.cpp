#include "optim/early_stopping.h"

#include <nlohmann/json.hpp>

#include "common/json_util.h"

namespace tft {

bool EarlyStopping::update(std::int64_t epoch, double loss) {
  if (loss < state_.best) {
    state_.best = loss;
    state_.best_epoch = epoch;
    state_.bad_epochs = 0;
    return true;
  }
  ++state_.bad_epochs;
  return false;
}

nlohmann::json EarlyStopping::state_to_json(const State& state) {
  return {{"best", json_number(state.best)},
          {"best_epoch", state.best_epoch},
          {"bad_epochs", state.bad_epochs}};
}

EarlyStopping::State EarlyStopping::state_from_json(const nlohmann::json& json) {
  State s;
  s.best = json_get_number_or_inf(json, "best", "early_stopping");
  s.best_epoch = json_get_int(json, "best_epoch", "early_stopping");
  s.bad_epochs = json_get_int(json, "bad_epochs", "early_stopping");
  return s;
}

}  // namespace tft
