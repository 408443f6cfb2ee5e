// dynamic(n, fraction) checkpointing for real: measure each unit's cost on the actual batch,
// choose the cheapest units that bring the activation peak to fraction x the un-checkpointed
// peak (checkpoint/planner.h), measure the choice, and re-plan with a corrected budget when
// the prediction was off.
//
// Measurements (each one training step's forward + backward, with the same dropout masks):
// none once to warm allocations up, then none and every unit alone kTimingRepeats times each
// (interleaved; the fastest run of each counts, the estimate least disturbed by other load),
// every unit together, then the chosen set (at most kMaxReplans + 1 times). Peaks are
// deterministic. A unit's cost is the time its reruns take in backward
// (checkpoint::recompute_nanoseconds), never taken below kMinRecomputeFraction of the
// un-checkpointed step: no unit is free. The model's weights, its checkpointing and
// train/eval mode, the random generators and the gradients (zeroed) are left as they were.
#pragma once

#include <functional>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "checkpoint/checkpoint_config.h"
#include "model/tft_model.h"
#include "train/checkpoint_plan.h"

namespace tft {

// The measured peak may exceed the target by this fraction of it and still count as met.
inline constexpr double kPlanTolerance = 0.05;
inline constexpr int kMaxReplans = 3;
inline constexpr int kTimingRepeats = 3;
inline constexpr double kMinRecomputeFraction = 0.005;

// Forward and loss on the planning batch; plan_checkpointing runs backward on the result.
using PlanningStep = std::function<at::Tensor()>;

// Plans for request's memory_fraction (request must be a dynamic strategy: ConfigError
// otherwise); the request's sub-layer flags carry over to the plan's config.
CheckpointPlan plan_checkpointing(TFTModel& model, const PlanningStep& step,
                                  const CheckpointConfig& request, const c10::Device& device);

}  // namespace tft
