// dynamic(n, fraction) checkpointing for real: measure each unit's cost on the actual batch,
// choose the cheapest chunks of units that bring the activation peak to fraction x the
// un-checkpointed peak (checkpoint/planner.h), measure the choice, and re-plan with a
// corrected budget while the measurement is off the target by more than the tolerance.
//
// Measurements (each one training step's forward + backward, with the same dropout masks;
// planning_step.h):
// none once to warm allocations up, then none and every unit alone kTimingRepeats times each
// (interleaved; the fastest run of each counts, the estimate least disturbed by other load),
// every unit together, then the chosen plans (at most kMaxReplans + 1). Peaks are
// deterministic. A unit's cost is the time its reruns take in backward
// (checkpoint::recompute_nanoseconds), never taken below kMinRecomputeFraction of the
// un-checkpointed step: no unit is free. The model's weights, its checkpointing and
// train/eval mode, the random generators and the gradients (zeroed) are left as they were.
//
// Why the planner picks how many of a unit's chunks recompute and not how many chunks the unit
// runs in: a chunk is an autograd segment, and moving segment boundaries changes the order in
// which parameter gradients are summed, so gradients would no longer be bitwise those of the
// un-checkpointed model run in the same partition (checkpoint.chunk_every_unit). Recomputing
// some of a fixed set of chunks changes no arithmetic there.
#pragma once

#include <cstdint>

#include <c10/core/Device.h>

#include "checkpoint/checkpoint_config.h"
#include "model/tft_model.h"
#include "planning/checkpoint_plan.h"
#include "planning/planning_step.h"

namespace tft {

// The measured peak may exceed the target by this fraction of it and still count as met; a
// plan measured more than this fraction below the target is re-planned for a cheaper one.
inline constexpr double kPlanTolerance = 0.05;
inline constexpr int kMaxReplans = 3;
inline constexpr int kTimingRepeats = 3;
inline constexpr double kMinRecomputeFraction = 0.005;

// Plans for request's memory_fraction (request must be a dynamic strategy: ConfigError
// otherwise); the request's sub-layer flags carry over to the plan's config. batch_size: the
// rows of the planning batch (static_encoder's chunks split them); `step` runs all of them.
CheckpointPlan plan_checkpointing(TFTModel& model, const PlanningStep& step,
                                  const CheckpointConfig& request, std::int64_t batch_size,
                                  const c10::Device& device);

}  // namespace tft
