// The budget planner's choice: how many chunks of which units to checkpoint so that the
// activation peak fits a memory budget at the least recompute time, from costs measured on
// the real batch shape (train/checkpoint_planning.h measures them; this file only chooses).
// No LibTorch here.
//
// Model: checkpointing all n chunks of unit i removes saved_bytes[i] from the
// un-checkpointed peak and adds recompute_seconds[i] to the step; checkpointing its first k
// chunks removes and adds k/n of those (the chunks split the unit's steps evenly, to within
// one step). A unit that recomputes nothing runs whole; once any of its chunks recomputes it
// runs in all of them, which costs chunking_seconds more (more, smaller operator calls: on a
// GPU, launches), so a plan pays that once per unit it touches. The peak of a plan is predicted as
// baseline - its savings (the activations the units keep are alive together at the end of the
// forward pass, where the peak sits). The choice is exact for that model: the cheapest plan whose
// predicted peak is within the budget, found over the Pareto front of (bytes saved, seconds) one
// unit at a time. The caller measures the chosen plan and re-plans with a corrected budget when the
// prediction was off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tft {

struct UnitCost {
  std::string name;
  std::int64_t chunks = 1;         // chunks the unit runs in (at least 1)
  std::int64_t saved_bytes = 0;    // peak(none) - peak(only this whole unit checkpointed)
  double recompute_seconds = 0.0;  // its reruns per step when wholly checkpointed, at least 0
  // What running in its chunks instead of whole adds to a step, paid when any chunk recomputes.
  double chunking_seconds = 0.0;
  // For the backward-aware prediction (predicted_peak_with_recompute); 0 where unknown.
  std::int64_t held_bytes = 0;       // what it keeps un-checkpointed, until its backward runs
  std::int64_t workspace_bytes = 0;  // a chunk's forward temporaries above what it keeps
};

struct CheckpointChoice {
  // Per unit, in unit order: how many of its first chunks recompute (0: none, chunks: all).
  std::vector<std::int64_t> checkpointed_chunks;
  std::int64_t predicted_peak_bytes = 0;
  double predicted_recompute_seconds = 0.0;
  bool fits = false;  // predicted peak <= budget; false: the lowest predicted peak instead

  bool operator==(const CheckpointChoice& other) const {
    return checkpointed_chunks == other.checkpointed_chunks;
  }
};

// Ties in time go to the plan that saves more. When no plan fits, returns every chunk of every
// unit with positive savings (the lowest predicted peak) with fits = false. Units with more
// than kMaxChunkOptions chunks are planned in kMaxChunkOptions even steps of chunks.
inline constexpr std::int64_t kMaxChunkOptions = 32;
CheckpointChoice choose_checkpoint_chunks(const std::vector<UnitCost>& units,
                                          std::int64_t baseline_peak_bytes,
                                          std::int64_t budget_bytes);

// The peak of a plan once backward's reruns are counted: backward runs the units in reverse,
// and rerunning a checkpointed chunk of unit u holds, on top of what is still kept then (the
// plan's forward-end level less what units after u and u's own un-checkpointed chunks kept,
// freed by their backward), that chunk's activations and its forward temporaries. The linear
// model above misses this where the last units are checkpointed and near the floor.
// Returns the larger of the linear prediction (baseline - savings) and every rerun's level.
std::int64_t predicted_peak_with_recompute(const std::vector<UnitCost>& units,
                                           const std::vector<std::int64_t>& checkpointed_chunks,
                                           std::int64_t baseline_peak_bytes);

// choose_checkpoint_chunks with backward's reruns counted: of the same Pareto front, the
// cheapest plan whose predicted_peak_with_recompute fits the budget (its predicted_peak_bytes
// is that peak). When none does, the plan with the most savings, fits = false. The front is
// the linear model's, so a plan off it that only the reruns would favour is not considered.
// min_chunks (per unit, optional): plans checkpoint at least that many of a unit's chunks
// (ignored for a unit whose checkpointing saves nothing).
CheckpointChoice choose_checkpoint_chunks_with_recompute(
    const std::vector<UnitCost>& units, std::int64_t baseline_peak_bytes, std::int64_t budget_bytes,
    const std::vector<std::int64_t>& min_chunks = {});

// The predicted savings and time of checkpointing the first k of a unit's chunks (the time:
// k/n of its reruns, plus chunking_seconds when k > 0).
std::int64_t partial_saved_bytes(const UnitCost& unit, std::int64_t k);
double partial_recompute_seconds(const UnitCost& unit, std::int64_t k);

}  // namespace tft
