// The budget planner's choice: which units to checkpoint so that the activation peak fits a
// memory budget at the least recompute time, from costs measured on the real batch shape
// (train/checkpoint_planning.h measures them; this file only chooses). No LibTorch here.
//
// Model: checkpointing unit i removes saved_bytes[i] from the un-checkpointed peak and adds
// recompute_seconds[i] to the step. The peak of a set S is predicted as
// baseline - sum_{i in S} saved_bytes[i] (the activations all units keep are alive together
// at the end of the forward pass, where the peak sits), and the choice is an exact 0/1
// knapsack: the cheapest S whose predicted peak is within the budget. The caller measures the
// chosen set and re-plans with a corrected budget when the prediction was off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tft {

struct UnitCost {
  std::string name;
  std::int64_t saved_bytes = 0;    // peak(none) - peak(only this unit checkpointed)
  double recompute_seconds = 0.0;  // step(only this unit) - step(none), at least 0
};

struct UnitChoice {
  std::vector<std::size_t> units;  // ascending unit indices
  std::int64_t predicted_peak_bytes = 0;
  double predicted_recompute_seconds = 0.0;
  bool fits = false;  // predicted peak <= budget; false: the lowest predicted peak instead
};

// Exact over every subset (units.size() <= 24; ConfigError beyond). Ties in time go to the
// set that saves more. When no set fits, returns the set of every unit with positive savings
// (the lowest predicted peak) with fits = false.
UnitChoice choose_checkpoint_units(const std::vector<UnitCost>& units,
                                   std::int64_t baseline_peak_bytes, std::int64_t budget_bytes);

}  // namespace tft
