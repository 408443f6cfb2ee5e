#include "planning/checkpoint_planning.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <variant>

#include "checkpoint/planner.h"
#include "common/error.h"

namespace tft {
namespace {

// The request's sub-layer flags and boundaries on `units`. Measured with the boundaries the
// request keeps: each unit's savings are then those of its compressed boundaries, which is how
// the planner's model accounts for them.
CheckpointConfig selective_like(const CheckpointConfig& request, std::vector<std::size_t> units) {
  CheckpointConfig config = CheckpointConfig::selective(std::move(units));
  config.checkpoint_attention = request.checkpoint_attention;
  config.checkpoint_ffn = request.checkpoint_ffn;
  config.boundary_dtype = request.boundary_dtype;
  config.chunk_every_unit = request.chunk_every_unit;
  return config;
}

}  // namespace

CheckpointPlan plan_checkpointing(TFTModel& model, const PlanningStep& step,
                                  const CheckpointConfig& request, std::int64_t batch_size,
                                  const c10::Device& device) {
  const auto* dynamic = std::get_if<DynamicStrategy>(&request.strategy);
  if (dynamic == nullptr) {
    throw ConfigError("checkpoint planner: the request is not a dynamic strategy (" +
                      request.summary() + ")");
  }
  const std::size_t n = model->units().size();
  // Puts the model, its gradients and the random state back however this ends.
  PlanningMeter meter(model, step, batch_size, device);
  auto measure = [&](const CheckpointConfig& config, const ChunkLimits& limits = {}) {
    return meter.measure(config, limits);
  };

  CheckpointPlan plan;
  plan.memory_fraction = dynamic->memory_fraction;
  measure(none_like(request));  // warm-up: first-call allocations and caches
  std::vector<CheckpointConfig> alone_configs;
  std::vector<std::size_t> every_unit;
  for (const UnitInfo& unit : model->units()) {
    alone_configs.push_back(selective_like(request, {unit.index}));
    every_unit.push_back(unit.index);
  }
  // Rounds of none + each unit alone; the fastest run of each. A unit's cost is the time its
  // reruns took (timed where they run, not a difference of two noisy step times).
  StepMeasurement none = measure(none_like(request));
  std::vector<StepMeasurement> alone;
  for (const CheckpointConfig& config : alone_configs) alone.push_back(measure(config));
  for (int round = 1; round < kTimingRepeats; ++round) {
    none.seconds = std::min(none.seconds, measure(none_like(request)).seconds);
    for (std::size_t i = 0; i < n; ++i) {
      alone[i].recompute_seconds =
          std::min(alone[i].recompute_seconds, measure(alone_configs[i]).recompute_seconds);
    }
  }
  plan.unchecked_peak_bytes = none.peak_bytes;
  plan.unchecked_step_seconds = none.seconds;
  const auto target = static_cast<double>(none.peak_bytes) * dynamic->memory_fraction;
  plan.target_peak_bytes = static_cast<std::int64_t>(std::floor(target));
  const double min_cost = kMinRecomputeFraction * none.seconds;
  std::vector<UnitCost> costs;
  for (std::size_t i = 0; i < n; ++i) {
    costs.push_back({model->units()[i].name, model->chunk_count(i, batch_size),
                     none.peak_bytes - alone[i].peak_bytes,
                     std::max(min_cost, alone[i].recompute_seconds)});
    // In the same partition none runs in chunks too: nothing extra to pay.
    if (!request.chunk_every_unit) {
      costs.back().chunking_seconds = chunking_seconds(none.units[i], alone[i].units[i]);
    }
  }
  plan.minimum_peak_bytes = measure(selective_like(request, every_unit)).peak_bytes;
  const auto allowed = static_cast<std::int64_t>(target * (1.0 + kPlanTolerance));
  const auto close_enough = static_cast<std::int64_t>(target * (1.0 - kPlanTolerance));
  plan.achievable = plan.minimum_peak_bytes <= allowed;

  // Measure the cheapest predicted plan; while the measurement is off the target band,
  // correct the budget by the error and try again. The cheapest plan measured within the
  // allowance wins.
  std::optional<CheckpointChoice> best;
  std::vector<CheckpointChoice> tried;
  double budget = target;
  for (int attempt = 0; attempt <= kMaxReplans && plan.achievable; ++attempt) {
    const CheckpointChoice choice = choose_checkpoint_chunks(
        costs, none.peak_bytes, static_cast<std::int64_t>(std::floor(budget)));
    if (std::find(tried.begin(), tried.end(), choice) != tried.end()) break;  // no new plan
    tried.push_back(choice);
    const PlanSetting setting = setting_for(request, choice, costs);
    const std::int64_t measured = measure(setting.config, setting.limits).peak_bytes;
    const bool within = measured <= allowed;
    if (within &&
        (!best || choice.predicted_recompute_seconds < best->predicted_recompute_seconds)) {
      best = choice;
      plan.measured_peak_bytes = measured;
    }
    if (within && measured >= close_enough) break;
    budget += target - static_cast<double>(measured);
  }
  if (!best) {  // not reachable, or the re-plans did not get there: the floor
    best = CheckpointChoice{};
    best->predicted_peak_bytes = none.peak_bytes;
    for (const UnitCost& c : costs) {
      best->checkpointed_chunks.push_back(c.chunks);
      best->predicted_peak_bytes -= c.saved_bytes;
      // What apply_choice charges each unit: its reruns and the price of its chunks.
      best->predicted_recompute_seconds += partial_recompute_seconds(c, c.chunks);
    }
    plan.measured_peak_bytes = plan.minimum_peak_bytes;
  }
  apply_choice(plan, request, *best, costs);
  plan.planning_seconds = meter.seconds();
  plan.planning_cpu_seconds = meter.cpu_seconds();
  return plan;
}

}  // namespace tft
