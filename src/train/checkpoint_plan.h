// What the budget planner decided for dynamic(n, fraction) checkpointing, and why: the
// measured cost of each unit, the chosen units, and the predicted and measured peaks.
// Plain data (made by plan_checkpointing in checkpoint_planning.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "checkpoint/checkpoint_config.h"

namespace tft {

struct PlannedUnit {
  std::string name;
  std::int64_t saved_bytes = 0;    // activation bytes checkpointing it alone saves (measured)
  double recompute_seconds = 0.0;  // its reruns in backward, per step (measured)
  bool checkpointed = false;       // chosen
};

struct CheckpointPlan {
  double memory_fraction = 1.0;           // asked for: peak <= fraction x unchecked peak
  std::int64_t unchecked_peak_bytes = 0;  // no checkpointing (measured)
  std::int64_t target_peak_bytes = 0;     // fraction x unchecked
  std::int64_t minimum_peak_bytes = 0;    // every unit checkpointed (measured): the floor
  std::int64_t predicted_peak_bytes = 0;  // of the chosen units, from the per-unit savings
  std::int64_t measured_peak_bytes = 0;   // of the chosen units
  double unchecked_step_seconds = 0.0;
  double predicted_recompute_seconds = 0.0;  // sum over the chosen units
  // The target is reachable (the floor is within the tolerance of it); false: the plan is
  // every unit, the lowest peak there is.
  bool achievable = false;
  std::vector<PlannedUnit> units;  // in unit order
  // What the model runs: selective over the chosen units, the request's sub-layer flags.
  CheckpointConfig config = CheckpointConfig::none();

  // "planned for 50% of 25.1 MiB: historical_encoder, lstm_encoder; measured 11.9 MiB
  //  (47.4%), predicted 12.2 MiB, +38 ms recompute per step" (or why it is not reachable).
  std::string summary() const;
  // {"memory_fraction", "achievable", "unchecked_peak_bytes", "target_peak_bytes",
  //  "minimum_peak_bytes", "predicted_peak_bytes", "measured_peak_bytes",
  //  "unchecked_step_seconds", "predicted_recompute_seconds",
  //  "units": [{"name", "saved_bytes", "recompute_seconds", "checkpointed"}, ...]}
  nlohmann::ordered_json to_json() const;
};

}  // namespace tft
