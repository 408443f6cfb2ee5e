// What the budget planner decided, and why: for dynamic(n, fraction) checkpointing
// (plan_checkpointing, checkpoint_planning.h) or for checkpoint.memory_budget
// (plan_for_budget, budget_planning.h): the measured cost of each unit, how many chunks of
// each it checkpoints, and the predicted and measured peaks. Plain data, and the two helpers
// both planners turn a choice into a plan with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "checkpoint/checkpoint_config.h"
#include "checkpoint/planner.h"

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

// A plan for checkpoint.memory_budget: what it was asked to fit and what it chose.
struct BudgetOutcome {
  std::int64_t budget_bytes = 0;  // the budget the measured peak fits
  std::string source;             // how it was set: "900.0 MiB", or "auto = 8.90 GiB (its terms)"
  BoundaryDtype boundary_dtype = BoundaryDtype::kFloat32;  // chosen
  double step_seconds = 0.0;      // the plan's measured step (forward + backward)
  double step_cpu_seconds = 0.0;  // the same in the process's CPU time
  // planning_seconds / step_seconds: what planning cost, in steps of the plan; and the same in
  // CPU time, which other load on a shared machine disturbs less.
  double planning_steps = 0.0;
  double planning_cpu_steps = 0.0;
  // The measured peak of the first plan that fitted, when a cheaper plan that takes more of the
  // budget was then measured to fit too and kept instead (it recomputes less by
  // recompute_seconds_saved, predicted); 0 when the first plan that fitted was kept.
  std::int64_t first_fit_peak_bytes = 0;
  double recompute_seconds_saved = 0.0;

  std::int64_t margin_bytes(std::int64_t measured) const { return budget_bytes - measured; }
};

struct CheckpointPlan {
  // Asked for: peak <= fraction x unchecked peak (a budget plan: budget / unchecked peak).
  double memory_fraction = 1.0;
  std::int64_t unchecked_peak_bytes = 0;  // no checkpointing (measured)
  std::int64_t target_peak_bytes = 0;     // fraction x unchecked (a budget plan: the budget)
  // Every unit checkpointed (measured): the floor. A budget plan measures it only when no
  // cheaper plan was verified (0 otherwise).
  std::int64_t minimum_peak_bytes = 0;
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
  double planning_seconds = 0.0;        // measuring and choosing, before training
  double planning_cpu_seconds = 0.0;    // the same in the process's CPU time
  std::optional<BudgetOutcome> budget;  // memory_budget plans only

  // "historical_encoder (6 of 8 chunks), lstm_encoder", or "no unit".
  std::string chosen() const;
  // "planned for 50% of 25.1 MiB: historical_encoder (6 of 8 chunks), lstm_encoder; measured
  //  11.9 MiB (47.4%), predicted 12.2 MiB, +38 ms recompute per step" (or why it is not
  //  reachable); for a budget "budget 900.0 MiB -> historical_encoder (2 of 8 chunks), float32
  //  boundaries; measured 850.0 MiB (margin 50.0 MiB), predicted 845.0 MiB, unchecked
  //  868.9 MiB, +40 ms recompute per step; planned in 2.1 s = 2.4 steps of 0.88 s".
  std::string summary() const;
  // For a budget plan kept over the first that fitted: " (N ms less ...)"; else "".
  std::string replaced_first_fit() const;
  // {"memory_fraction", "achievable", "unchecked_peak_bytes", "target_peak_bytes",
  //  "minimum_peak_bytes", "predicted_peak_bytes", "measured_peak_bytes",
  //  "unchecked_step_seconds", "predicted_recompute_seconds",
  //  "planning_seconds", "planning_cpu_seconds",
  //  "units": [{"name", "chunks", "saved_bytes", "recompute_seconds", "checkpointed",
  //             "checkpointed_chunks", "planned_saved_bytes", "kept_bytes",
  //             "planned_recompute_seconds"}, ...],
  //  and for a budget "memory_budget": {"budget_bytes", "source", "boundary_dtype",
  //  "margin_bytes", "step_seconds", "step_cpu_seconds", "planning_steps",
  //  "planning_cpu_steps"}}
  nlohmann::ordered_json to_json() const;
};

// What the model runs for a choice: selective over the units with any chunk checkpointed,
// with the sub-layer flags and boundary dtype of `like`, and the limits of the units
// checkpointed in part.
struct PlanSetting {
  CheckpointConfig config = CheckpointConfig::none();
  std::map<std::size_t, std::int64_t> limits;
};
PlanSetting setting_for(const CheckpointConfig& like, const CheckpointChoice& choice,
                        const std::vector<UnitCost>& costs);

// Fills plan.units, the predicted figures, config and chunk_limits from a choice.
void apply_choice(CheckpointPlan& plan, const CheckpointConfig& like,
                  const CheckpointChoice& choice, const std::vector<UnitCost>& costs);

}  // namespace tft
