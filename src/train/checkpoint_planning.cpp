#include "train/checkpoint_planning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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
  return config;
}

}  // namespace

CheckpointPlan plan_checkpointing(TFTModel& model, const PlanningStep& step,
                                  const CheckpointConfig& request, const c10::Device& device) {
  const auto* dynamic = std::get_if<DynamicStrategy>(&request.strategy);
  if (dynamic == nullptr) {
    throw ConfigError("checkpoint planner: the request is not a dynamic strategy (" +
                      request.summary() + ")");
  }
  const std::size_t n = model->units().size();
  const CheckpointConfig previous = model->checkpointing();
  const bool was_training = model->is_training();
  const std::vector<at::Tensor> parameters = model->parameters();
  RngStateGuard restore_rng(device);
  const RngState start = RngState::capture(device);
  memory::MemoryMeter meter(device);

  auto measure = [&](const CheckpointConfig& config) {
    model->set_checkpointing(config);
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
    plan.target_peak_bytes = static_cast<std::int64_t>(
        std::floor(dynamic->memory_fraction * static_cast<double>(none.peak_bytes)));
    const double min_cost = kMinRecomputeFraction * none.seconds;
    std::vector<UnitCost> costs;
    for (std::size_t i = 0; i < n; ++i) {
      costs.push_back({model->units()[i].name, none.peak_bytes - alone[i].peak_bytes,
                       std::max(min_cost, alone[i].recompute_seconds)});
    }
    plan.minimum_peak_bytes = measure(selective_like(request, every_unit)).peak_bytes;
    const auto allowed = static_cast<std::int64_t>(
        static_cast<double>(plan.target_peak_bytes) * (1.0 + kPlanTolerance));
    plan.achievable = plan.minimum_peak_bytes <= allowed;

    UnitChoice choice;
    bool met = false;
    std::int64_t budget = plan.target_peak_bytes;
    for (int attempt = 0; attempt <= kMaxReplans && plan.achievable && !met; ++attempt) {
      choice = choose_checkpoint_units(costs, none.peak_bytes, budget);
      plan.measured_peak_bytes = measure(selective_like(request, choice.units)).peak_bytes;
      met = plan.measured_peak_bytes <= allowed;
      // The prediction was optimistic by this much: ask the next choice for that much more.
      budget -= std::max<std::int64_t>(plan.measured_peak_bytes - plan.target_peak_bytes, 1);
    }
    if (!met) {  // not reachable, or the re-plans did not get there: the floor
      choice = UnitChoice{};
      choice.units = every_unit;
      choice.predicted_peak_bytes = none.peak_bytes;
      for (const UnitCost& c : costs) {
        choice.predicted_peak_bytes -= c.saved_bytes;
        choice.predicted_recompute_seconds += c.recompute_seconds;
      }
      plan.measured_peak_bytes = plan.minimum_peak_bytes;
    }
    plan.predicted_peak_bytes = choice.predicted_peak_bytes;
    plan.predicted_recompute_seconds = choice.predicted_recompute_seconds;
    for (std::size_t i = 0; i < n; ++i) {
      const bool chosen = std::find(choice.units.begin(), choice.units.end(), i) != choice.units.end();
      plan.units.push_back({costs[i].name, costs[i].saved_bytes, costs[i].recompute_seconds, chosen});
    }
    plan.config = selective_like(request, choice.units);
  } catch (...) {
    model->set_checkpointing(previous);
    model->train(was_training);
    zero_gradients(parameters);
    throw;
  }
  model->set_checkpointing(previous);
  model->train(was_training);
  return plan;
}

}  // namespace tft
