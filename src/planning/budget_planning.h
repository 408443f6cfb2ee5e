// checkpoint.memory_budget for real: the cheapest checkpoint plan whose measured step peak
// fits a budget in bytes, chosen from costs measured on the first training batch, and
// verified by measuring it, as dynamic(n, fraction) is (checkpoint_planning.h). Where
// dynamic's target is a fraction of the un-checkpointed peak, this one is an absolute size.
//
// Measurements (planning_step.h; each one step on the planning batch, the same dropout masks):
//  1. every unit checkpointed with float32 boundaries, forward only: the bytes each unit
//     keeps when checkpointed (and the first-call warm-up);
//  2. no checkpointing, forward and backward: the un-checkpointed peak, the bytes each unit
//     keeps and the time its forward takes (what recomputing it costs: the faster of this and
//     step 1's, never below kMinRecomputeFraction of the step). When that peak fits, the plan
//     is no checkpointing.
//  3. the cheapest plan predicted to fit (checkpoint/planner.h: units, then how many of each
//     unit's chunks, each unit saving what it keeps minus what it keeps checkpointed; the
//     prediction counts what rerunning a checkpointed chunk holds in backward, from step 1's
//     per-unit temporaries: predicted_peak_with_recompute), measured. On a miss that plan with
//     the first chunk of every unit it left whole checkpointed too is measured next: a unit run
//     whole can peak in its own backward, which the per-unit model does not see and no other
//     unit's checkpointing lowers, and one checkpointed chunk runs it in its chunks. If that
//     misses too, the budget planned for is lowered to the missed plan's prediction less the
//     miss (so the next plan predicts less than the one that missed) and the floor (every unit
//     checkpointed, forward and backward) is measured once: below the budget it is the fallback
//     and the search goes on (at most kBudgetVerifications plans), above it no float32 plan fits.
//     A unit that peaked in its own backward run whole stays in chunks in every later plan. A
//     plan that fits, measured well under its prediction (by kOverestimateWorthSpending of the
//     budget or more) or with its whole units chunked, is followed by the cheapest plan
//     predicted to fit the budget raised by that overestimate (the fit's chunked units kept in
//     chunks), measured and kept when it fits and recomputes less, while plans remain. A
//     budget below a rough estimate of the floor (what every unit checkpointed keeps at the end of
//     forward + the largest chunk + what backward adds without checkpointing) measures the floor
//     first; a measured floor lowers the budget planned for by what the per-unit model missed there
//     (the recompute in backward);
//  4. only then bfloat16, then int8 boundaries: their floor first (its forward gives the bytes
//     each unit keeps with them); when it fits, step 3 with that dtype.
// So a plan that fits usually costs a forward and two steps, three when it spends unused
// budget (a forward and one step when no checkpointing fits), near the float32 floor
// too; one below it a step per dtype tried more.
//
// When nothing fits, MemoryBudgetError (one line, before any training): the smallest peak
// any plan reaches at this batch size, the largest batch size that fits (the floor measured
// at half the rows gives the cost per row; the batch size extrapolated from it is measured,
// and lowered until it fits, at most kBatchSizeProbes times, each next guess from the line
// through the last two measurements, and one row always measured; the message says whether
// the number was measured or extrapolated), and what else lowers the peak.
#pragma once

#include <cstdint>

#include <c10/core/Device.h>

#include "checkpoint/checkpoint_config.h"
#include "model/tft_model.h"
#include "planning/budget_request.h"
#include "planning/checkpoint_plan.h"
#include "planning/planning_step.h"

namespace tft {

inline constexpr int kBudgetVerifications = 3;  // per boundary dtype
inline constexpr int kBatchSizeProbes = 3;
// A fitting plan's overestimate (its prediction over its measured peak) below this share of the
// budget is not worth a step to spend on a cheaper plan.
inline constexpr double kOverestimateWorthSpending = 0.02;

// Plans for budget.bytes. request: the checkpoint config (a memory_budget, strategy none);
// its sub-layer flags carry over to the plan's config. batch_size: the planning batch's rows,
// all of which `step` runs when asked for batch_size. ConfigError for a budget that is not
// positive; MemoryBudgetError when nothing fits.
CheckpointPlan plan_for_budget(TFTModel& model, const PlanningStep& step,
                               const CheckpointConfig& request, const BudgetRequest& budget,
                               std::int64_t batch_size, const c10::Device& device);

}  // namespace tft
