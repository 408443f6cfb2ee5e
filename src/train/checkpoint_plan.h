// What the budget planner decided for dynamic(n, fraction) checkpointing, and why: the
// measured cost of each unit, how many chunks of each it checkpoints, and the predicted and
// measured peaks.
// Plain data (made by plan_checkpointing in checkpoint_planning.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "checkpoint/checkpoint_config.h"

namespace tft {

struct PlannedUnit {
  std::string name;
  std::int64_t chunks = 1;               // the chunks it runs in
  std::int64_t saved_bytes = 0;          // activation bytes checkpointing it alone saves (measured)
  double recompute_seconds = 0.0;        // its reruns in backward, per step (measured)
  std::int64_t checkpointed_chunks = 0;  // chosen: its first this many chunks recompute
  // Under the plan (the planner's prediction from the measurements above): the activation
  // bytes it saves, the bytes it still keeps, and the time its reruns add to a step.
  std::int64_t planned_saved_bytes = 0;
  std::int64_t kept_bytes = 0;
  double planned_recompute_seconds = 0.0;

  bool checkpointed() const { return checkpointed_chunks > 0; }
};

struct CheckpointPlan {
  double memory_fraction = 1.0;           // asked for: peak <= fraction x unchecked peak
  std::int64_t unchecked_peak_bytes = 0;  // no checkpointing (measured)
  std::int64_t target_peak_bytes = 0;     // fraction x unchecked
  std::int64_t minimum_peak_bytes = 0;    // every unit checkpointed (measured): the floor
  std::int64_t predicted_peak_bytes = 0;  // of the chosen chunks, from the per-unit savings
  std::int64_t measured_peak_bytes = 0;   // of the chosen chunks
  double unchecked_step_seconds = 0.0;
  double predicted_recompute_seconds = 0.0;  // sum over the chosen chunks
  // The target is reachable (the floor is within the tolerance of it); false: the plan is
  // every unit, the lowest peak there is.
  bool achievable = false;
  std::vector<PlannedUnit> units;  // in unit order
  // What the model runs: selective over the chosen units, the request's sub-layer flags, and
  // for each unit checkpointed in part, how many of its chunks (TFTModel's
  // set_checkpointed_chunks).
  CheckpointConfig config = CheckpointConfig::none();
  std::map<std::size_t, std::int64_t> chunk_limits;

  // "historical_encoder (6 of 8 chunks), lstm_encoder", or "no unit".
  std::string chosen() const;
  // "planned for 50% of 25.1 MiB: historical_encoder (6 of 8 chunks), lstm_encoder; measured
  //  11.9 MiB (47.4%), predicted 12.2 MiB, +38 ms recompute per step" (or why it is not
  //  reachable).
  std::string summary() const;
  // {"memory_fraction", "achievable", "unchecked_peak_bytes", "target_peak_bytes",
  //  "minimum_peak_bytes", "predicted_peak_bytes", "measured_peak_bytes",
  //  "unchecked_step_seconds", "predicted_recompute_seconds",
  //  "units": [{"name", "chunks", "saved_bytes", "recompute_seconds", "checkpointed",
  //             "checkpointed_chunks", "planned_saved_bytes", "kept_bytes",
  //             "planned_recompute_seconds"}, ...]}
  nlohmann::ordered_json to_json() const;
};

}  // namespace tft
