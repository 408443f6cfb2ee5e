#include "train/checkpoint_planning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <variant>

#include <torch/autograd.h>

#include "checkpoint/planner.h"
#include "checkpoint/recompute.h"
#include "common/error.h"
#include "memory/memory_meter.h"
#include "train/gradient_buffers.h"
#include "train/rng_state.h"

namespace tft {
namespace {

struct Measurement {
  std::int64_t peak_bytes = 0;
  double seconds = 0.0;            // the whole step
  double recompute_seconds = 0.0;  // the reruns of checkpointed segments in it
};

CheckpointConfig selective_like(const CheckpointConfig& request, std::vector<std::size_t> units) {
  CheckpointConfig config = CheckpointConfig::selective(std::move(units));
  config.checkpoint_attention = request.checkpoint_attention;
  config.checkpoint_ffn = request.checkpoint_ffn;
  // Measured with the boundaries the request keeps: each unit's savings are then those of
  // its compressed boundaries, which is how the planner's model accounts for them.
  config.boundary_dtype = request.boundary_dtype;
  return config;
}

// What the model runs for a choice: the units with any chunk checkpointed, and the limits of
// those checkpointed in part.
struct ModelSetting {
  CheckpointConfig config = CheckpointConfig::none();
  ChunkLimits limits;
};

ModelSetting setting_for(const CheckpointConfig& request, const CheckpointChoice& choice,
                         const std::vector<UnitCost>& costs) {
  std::vector<std::size_t> units;
  ModelSetting setting;
  for (std::size_t i = 0; i < choice.checkpointed_chunks.size(); ++i) {
    const std::int64_t k = choice.checkpointed_chunks[i];
    if (k <= 0) continue;
    units.push_back(i);
    if (k < costs[i].chunks) setting.limits[i] = k;
  }
  setting.config = selective_like(request, std::move(units));
  return setting;
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
  const CheckpointConfig previous = model->checkpointing();
  const ChunkLimits previous_limits = model->checkpointed_chunks();
  const bool was_training = model->is_training();
  const std::vector<at::Tensor> parameters = model->parameters();
  RngStateGuard restore_rng(device);
  const RngState start = RngState::capture(device);
  memory::MemoryMeter meter(device);

  auto measure = [&](const CheckpointConfig& config, const ChunkLimits& limits = {}) {
    model->set_checkpointing(config);
    model->set_checkpointed_chunks(limits);
    model->train();
    start.restore();  // the same dropout masks in every measurement
    Measurement m;
    {
      memory::ActivationProbe probe(meter);
      const std::int64_t recompute_before = checkpoint::recompute_nanoseconds();
      const auto begin = std::chrono::steady_clock::now();
      step().backward();
      m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      m.recompute_seconds =
          1e-9 * static_cast<double>(checkpoint::recompute_nanoseconds() - recompute_before);
      m.peak_bytes = probe.activation_peak_bytes();
    }
    zero_gradients(parameters);
    return m;
  };
  auto restore_model = [&] {
    model->set_checkpointing(previous);
    model->set_checkpointed_chunks(previous_limits);
    model->train(was_training);
  };

  CheckpointPlan plan;
  plan.memory_fraction = dynamic->memory_fraction;
  try {
    measure(CheckpointConfig::none());  // warm-up: first-call allocations and caches
    std::vector<CheckpointConfig> alone_configs;
    std::vector<std::size_t> every_unit;
    for (const UnitInfo& unit : model->units()) {
      alone_configs.push_back(selective_like(request, {unit.index}));
      every_unit.push_back(unit.index);
    }
    // Rounds of none + each unit alone; the fastest run of each. A unit's cost is the time its
    // reruns took (timed where they run, not a difference of two noisy step times).
    Measurement none = measure(CheckpointConfig::none());
    std::vector<Measurement> alone;
    for (const CheckpointConfig& config : alone_configs) alone.push_back(measure(config));
    for (int round = 1; round < kTimingRepeats; ++round) {
      none.seconds = std::min(none.seconds, measure(CheckpointConfig::none()).seconds);
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
      const ModelSetting setting = setting_for(request, choice, costs);
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
        best->predicted_recompute_seconds += c.recompute_seconds;
      }
      plan.measured_peak_bytes = plan.minimum_peak_bytes;
    }
    plan.predicted_peak_bytes = best->predicted_peak_bytes;
    plan.predicted_recompute_seconds = best->predicted_recompute_seconds;
    for (std::size_t i = 0; i < n; ++i) {
      const UnitCost& c = costs[i];
      const std::int64_t k = best->checkpointed_chunks[i];
      PlannedUnit unit{c.name, c.chunks, c.saved_bytes, c.recompute_seconds, k};
      unit.planned_saved_bytes = partial_saved_bytes(c, k);
      unit.kept_bytes = std::max<std::int64_t>(0, c.saved_bytes - unit.planned_saved_bytes);
      unit.planned_recompute_seconds = partial_recompute_seconds(c, k);
      plan.units.push_back(std::move(unit));
    }
    ModelSetting setting = setting_for(request, *best, costs);
    plan.config = std::move(setting.config);
    plan.chunk_limits = std::move(setting.limits);
  } catch (...) {
    restore_model();
    zero_gradients(parameters);
    throw;
  }
  restore_model();
  return plan;
}

}  // namespace tft
