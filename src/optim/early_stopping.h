// Early stopping on the monitored loss (validation loss, or training loss without a
// validation set): stop after `patience` epochs in a row without a loss strictly below the
// best so far. Patience 0 never stops, but the best epoch is still tracked (the trainer keeps
// that epoch's weights either way). The state is plain data for snapshots.
#pragma once

#include <cstdint>
#include <limits>

#include <nlohmann/json_fwd.hpp>

namespace tft {

class EarlyStopping {
 public:
  struct State {
    double best = std::numeric_limits<double>::infinity();
    std::int64_t best_epoch = 0;  // 1-based; 0 while no epoch has finished
    std::int64_t bad_epochs = 0;
  };

  explicit EarlyStopping(std::int64_t patience) : patience_(patience) {}

  // Records the loss of `epoch` (1-based); returns whether it is a new best. NaN never is.
  bool update(std::int64_t epoch, double loss);
  bool should_stop() const { return patience_ > 0 && state_.bad_epochs >= patience_; }

  double best() const { return state_.best; }
  std::int64_t best_epoch() const { return state_.best_epoch; }
  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

  static nlohmann::json state_to_json(const State& state);
  static State state_from_json(const nlohmann::json& json);

 private:
  std::int64_t patience_;
  State state_;
};

}  // namespace tft
