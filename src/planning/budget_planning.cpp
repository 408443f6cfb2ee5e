#include "planning/budget_planning.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "checkpoint/planner.h"
#include "common/error.h"
#include "common/format.h"
#include "planning/checkpoint_planning.h"  // kMinRecomputeFraction

namespace tft {

namespace {

constexpr BoundaryDtype kDtypesInOrder[] = {BoundaryDtype::kFloat32, BoundaryDtype::kBFloat16,
                                            BoundaryDtype::kInt8};

struct Verified {
  CheckpointChoice choice;
  StepMeasurement measured;
  std::int64_t first_fit_peak_bytes = 0;  // BudgetOutcome's
  double recompute_seconds_saved = 0.0;
};

// The largest batch size whose floor fits, and whether a step measured it.
struct BatchFit {
  std::int64_t rows = 0;
  std::int64_t peak_bytes = 0;
  bool measured = false;
  double bytes_per_row = 0.0;
};

class BudgetPlanner {
 public:
  BudgetPlanner(TFTModel& model, PlanningMeter& meter, const CheckpointConfig& request,
                std::int64_t budget, std::int64_t batch_size)
      : model_(model), meter_(meter), request_(request), budget_(budget), batch_size_(batch_size) {}

  // The request's sub-layer flags with `dtype` boundaries: what every plan of that dtype runs.
  CheckpointConfig like(BoundaryDtype dtype) const {
    CheckpointConfig config = request_;
    config.memory_budget.reset();
    config.boundary_dtype = dtype;
    return config;
  }

  CheckpointChoice every_chunk(const std::vector<UnitCost>& costs) const {
    CheckpointChoice choice;
    for (const UnitCost& c : costs) {
      choice.checkpointed_chunks.push_back(c.chunks);
      // What apply_choice charges each unit: its reruns and the price of its chunks.
      choice.predicted_recompute_seconds += partial_recompute_seconds(c, c.chunks);
    }
    choice.predicted_peak_bytes =
        predicted_peak_with_recompute(costs, choice.checkpointed_chunks, none_.peak_bytes);
    choice.fits = true;
    return choice;
  }

  // `choice` with the first chunk of every unit it leaves whole checkpointed too (units in one
  // chunk, which run alike either way, left as they are), priced and predicted as choose() does.
  CheckpointChoice with_whole_units_chunked(const CheckpointChoice& choice,
                                            const std::vector<UnitCost>& costs) const {
    CheckpointChoice chunked = choice;
    chunked.predicted_recompute_seconds = 0.0;
    for (std::size_t u = 0; u < costs.size(); ++u) {
      std::int64_t& k = chunked.checkpointed_chunks[u];
      if (k == 0 && costs[u].chunks > 1 && costs[u].held_bytes > 0) k = 1;
      chunked.predicted_recompute_seconds += partial_recompute_seconds(costs[u], k);
    }
    chunked.predicted_peak_bytes =
        predicted_peak_with_recompute(costs, chunked.checkpointed_chunks, none_.peak_bytes);
    return chunked;
  }

  // The cheapest plan predicted to fit `budget` with backward's reruns counted, checkpointing
  // at least min_chunks of each unit's chunks: the linear model's Pareto front scanned for
  // predicted_peak_with_recompute (checkpoint/planner.h). A miss found here costs no step.
  CheckpointChoice choose(const std::vector<UnitCost>& costs, double budget,
                          const std::vector<std::int64_t>& min_chunks) const {
    return choose_checkpoint_chunks_with_recompute(
        costs, none_.peak_bytes, static_cast<std::int64_t>(std::floor(budget)), min_chunks);
  }

  StepMeasurement measure(const CheckpointConfig& like_dtype, const CheckpointChoice& choice,
                          const std::vector<UnitCost>& costs) {
    const PlanSetting setting = setting_for(like_dtype, choice, costs);
    return meter_.measure(setting.config, setting.limits);
  }

  // A plan that fits can leave budget unused that a cheaper plan would take:
  //  - the per-unit model can predict a plan well over what it measures (the reference config
  //    at 122.9 MiB: historical_encoder in 6 of 8 chunks and the cheap units, predicted 120.8
  //    MiB, measured 104.1; the floor, 76.6 against 59.8: the prediction counts a rerun's
  //    temporaries on top of bytes that backward has freed by then);
  //  - a plan with its whole units chunked (plan_dtype) was not chosen for the budget: at 293.2
  //    MiB on the reference config it measured 256.3.
  // So once a plan has fitted, the cheapest plan predicted to fit the budget planned for,
  // raised by the fit's overestimate, is measured too, and kept when it fits and recomputes
  // less: one step more, spent only when it may pay (an overestimate of
  // kOverestimateWorthSpending of the budget or more, or a chunked fit) and `attempts_left`.
  // Units the fit ran in chunks stay in chunks: run whole, a unit's backward can peak over the
  // budget.
  void spend_unused_budget(Verified& fit, bool chunked_fit, const CheckpointConfig& like_dtype,
                           const std::vector<UnitCost>& costs, double planning_budget,
                           std::vector<std::int64_t> min_chunks,
                           std::vector<CheckpointChoice>& tried, int attempts_left) {
    const std::int64_t overestimate =
        std::max<std::int64_t>(0, fit.choice.predicted_peak_bytes - fit.measured.peak_bytes);
    const bool worth_it =
        chunked_fit || static_cast<double>(overestimate) >=
                           kOverestimateWorthSpending * static_cast<double>(budget_);
    if (attempts_left <= 0 || !worth_it) return;
    for (std::size_t u = 0; u < costs.size(); ++u) {
      if (fit.choice.checkpointed_chunks[u] > 0)
        min_chunks[u] = std::max<std::int64_t>(min_chunks[u], 1);
    }
    const CheckpointChoice cheaper =
        choose(costs, planning_budget + static_cast<double>(overestimate), min_chunks);
    if (!cheaper.fits || std::find(tried.begin(), tried.end(), cheaper) != tried.end() ||
        cheaper.predicted_recompute_seconds >= fit.choice.predicted_recompute_seconds) {
      return;
    }
    tried.push_back(cheaper);
    StepMeasurement measured = measure(like_dtype, cheaper, costs);
    if (measured.peak_bytes > budget_) return;
    const double saved =
        fit.choice.predicted_recompute_seconds - cheaper.predicted_recompute_seconds;
    const std::int64_t first_fit_peak = fit.measured.peak_bytes;
    fit = Verified{cheaper, std::move(measured), first_fit_peak, saved};
  }

  // What each unit saves when checkpointed: what it keeps without checkpointing minus what it
  // keeps with (its outputs, its compressed boundaries). Costs: its forward time, the faster
  // of the two measured (with and without checkpointing: the same work), which a burst of
  // other load on the machine inflates less often.
  std::vector<UnitCost> costs_from(const StepMeasurement& checkpointed_forward) const {
    std::vector<UnitCost> costs;
    // In the units' cost clock (planning_step.h): CPU time on the CPU.
    const double step_cost = meter_.device().is_cpu() ? none_.cpu_seconds : none_.seconds;
    const double min_cost = kMinRecomputeFraction * step_cost;
    const std::vector<UnitInfo> units = model_->units();
    for (std::size_t i = 0; i < units.size(); ++i) {
      const std::int64_t saved =
          none_.units[i].kept_bytes - checkpointed_forward.units[i].kept_bytes;
      UnitCost cost{units[i].name, model_->chunk_count(i, batch_size_),
                    std::max<std::int64_t>(0, saved),
                    std::max(min_cost, std::min(none_.units[i].forward_seconds,
                                                checkpointed_forward.units[i].forward_seconds))};
      // In the same partition none runs in chunks too: nothing extra to pay.
      if (!request_.chunk_every_unit) {
        cost.chunking_seconds = chunking_seconds(none_.units[i], checkpointed_forward.units[i]);
      }
      cost.held_bytes = std::max<std::int64_t>(0, none_.units[i].kept_bytes);
      // Measured in float32's forward-only pass; boundaries' dtype does not change them.
      cost.workspace_bytes = i < workspace_.size() ? workspace_[i] : 0;
      costs.push_back(std::move(cost));
    }
    return costs;
  }

  // What planning found for one boundary dtype: the cheapest plan measured to fit, if any, and
  // the floor (every unit checkpointed) when it was measured (-1 otherwise).
  struct DtypeOutcome {
    std::optional<Verified> verified;
    std::vector<UnitCost> costs;
    std::int64_t floor_peak = -1;
  };

  // float32 (`checkpointed_forward` given: its costs): the cheapest plan predicted to fit,
  // measured; on a miss the budget planned for is lowered by the miss, and the floor is
  // measured once, so that a budget below it stops the search there. Compressed boundaries:
  // the floor first, whose forward gives the costs; when it does not fit, nothing of that
  // dtype can. The floor is the fallback when no cheaper plan was verified.
  //
  // Near the floor the per-unit model misses what backward adds: a checkpointed chunk is
  // recomputed there on top of what is still held. So when the budget is below a rough
  // estimate of the floor (what every unit checkpointed keeps at the end of forward, plus the
  // largest chunk of any unit, plus what backward adds on top of the forward's end without
  // checkpointing), the floor is measured first; a measured floor lowers the budget planned
  // for by what the model missed there.
  DtypeOutcome plan_dtype(BoundaryDtype dtype,
                          const std::optional<StepMeasurement>& checkpointed_forward) {
    DtypeOutcome out;
    const CheckpointConfig like_dtype = like(dtype);
    std::optional<StepMeasurement> floor;
    const auto measure_floor = [&] {
      floor = meter_.measure(every_unit(like_dtype));
      out.floor_peak = floor->peak_bytes;
      return floor->peak_bytes <= budget_;
    };
    if (checkpointed_forward) {
      out.costs = costs_from(*checkpointed_forward);
      if (budget_ < floor_estimate(*checkpointed_forward, out.costs) && !measure_floor()) {
        return out;
      }
    } else {
      const bool fits = measure_floor();
      out.costs = costs_from(*floor);
      if (!fits) return out;
    }
    const CheckpointChoice all = every_chunk(out.costs);
    std::vector<CheckpointChoice> tried{all};  // the floor is measured on its own
    double planning_budget = static_cast<double>(budget_);
    const auto correct_for_floor = [&] {
      const auto missed = static_cast<double>(floor->peak_bytes - all.predicted_peak_bytes);
      planning_budget = std::min(planning_budget, static_cast<double>(budget_) - missed);
    };
    if (floor) correct_for_floor();
    // 1 for a unit found to peak in its own backward when run whole (below): later plans keep
    // it in chunks.
    std::vector<std::int64_t> min_chunks(out.costs.size(), 0);
    for (int attempt = 0; attempt < kBudgetVerifications; ++attempt) {
      const CheckpointChoice choice = choose(out.costs, planning_budget, min_chunks);
      if (!choice.fits || std::find(tried.begin(), tried.end(), choice) != tried.end()) break;
      tried.push_back(choice);
      StepMeasurement measured = measure(like_dtype, choice, out.costs);
      if (measured.peak_bytes <= budget_) {
        out.verified = Verified{choice, std::move(measured)};
        spend_unused_budget(*out.verified, false, like_dtype, out.costs, planning_budget,
                            min_chunks, tried, kBudgetVerifications - attempt - 1);
        return out;
      }
      // A miss may come from a unit the plan leaves whole: its backward, run whole, holds its
      // gradients and remade tensors at once, a peak the per-unit model does not see and that
      // no other unit's checkpointing lowers (the reference config's historical encoder: 319 MiB
      // whatever the cheap units save, BENCHMARKS.md). One checkpointed chunk runs such a unit
      // in its chunks, so the same plan with the first chunk of each unit it left whole is
      // measured next, before the budget planned for is lowered.
      const CheckpointChoice chunked = with_whole_units_chunked(choice, out.costs);
      if (attempt + 1 < kBudgetVerifications && !(chunked == choice) &&
          std::find(tried.begin(), tried.end(), chunked) == tried.end()) {
        ++attempt;
        tried.push_back(chunked);
        StepMeasurement chunked_measured = measure(like_dtype, chunked, out.costs);
        if (chunked_measured.peak_bytes < measured.peak_bytes) {
          for (std::size_t u = 0; u < min_chunks.size(); ++u) {
            if (choice.checkpointed_chunks[u] == 0 && chunked.checkpointed_chunks[u] > 0) {
              min_chunks[u] = 1;
            }
          }
        }
        if (chunked_measured.peak_bytes <= budget_) {
          out.verified = Verified{chunked, std::move(chunked_measured)};
          spend_unused_budget(*out.verified, true, like_dtype, out.costs, planning_budget,
                              min_chunks, tried, kBudgetVerifications - attempt - 1);
          return out;
        }
      }
      // Below the missed plan's own prediction by the miss: lowering only the budget planned for
      // can leave that plan predicted to fit again (its prediction was short by more than it
      // missed the budget by), and a plan tried twice ends the search at the floor.
      planning_budget =
          std::min(planning_budget, static_cast<double>(choice.predicted_peak_bytes)) -
          static_cast<double>(measured.peak_bytes - budget_);
      if (!floor) {
        if (!measure_floor()) return out;
        correct_for_floor();
      }
    }
    if (!floor && !measure_floor()) return out;
    if (floor->peak_bytes <= budget_) out.verified = Verified{all, *floor};
    return out;
  }

  // A rough floor (see plan_dtype): it only decides whether to measure the floor first.
  std::int64_t floor_estimate(const StepMeasurement& checkpointed_forward,
                              const std::vector<UnitCost>& costs) const {
    std::int64_t largest_chunk = 0;
    for (const UnitCost& c : costs)
      largest_chunk = std::max(largest_chunk, c.saved_bytes / c.chunks);
    return checkpointed_forward.forward_end_bytes + largest_chunk +
           (none_.peak_bytes - none_.forward_end_bytes);
  }

  void measure_none() { none_ = meter_.measure(none_like(request_)); }
  // Each unit's chunk temporaries, from a forward-only pass with every unit checkpointed.
  void keep_workspace(const StepMeasurement& checkpointed_forward) {
    workspace_.clear();
    for (const UnitMeasurement& u : checkpointed_forward.units)
      workspace_.push_back(std::max<std::int64_t>(0, u.workspace_bytes));
  }
  const StepMeasurement& none() const { return none_; }

  // Every unit checkpointed, with `like`'s sub-layer flags and boundaries.
  CheckpointConfig every_unit(const CheckpointConfig& like) const {
    CheckpointConfig config = like;
    std::vector<std::size_t> units;
    for (const UnitInfo& u : model_->units()) units.push_back(u.index);
    config.strategy = SelectiveStrategy{std::move(units)};
    return config;
  }

  BatchFit largest_fitting_batch(BoundaryDtype dtype, std::int64_t floor_peak) {
    const CheckpointConfig floor_config = every_unit(like(dtype));
    const auto floor = [&](std::int64_t rows) {
      return meter_.measure(floor_config, {}, rows).peak_bytes;
    };
    BatchFit fit;
    if (batch_size_ < 2) return fit;
    const std::int64_t half = batch_size_ / 2;
    const std::int64_t half_peak = floor(half);
    fit.bytes_per_row =
        static_cast<double>(floor_peak - half_peak) / static_cast<double>(batch_size_ - half);
    if (fit.bytes_per_row <= 0.0) return fit;
    double fixed = static_cast<double>(floor_peak) - fit.bytes_per_row * batch_size_;
    const auto peak_at = [&](std::int64_t rows) {
      return static_cast<std::int64_t>(fixed + fit.bytes_per_row * static_cast<double>(rows));
    };
    const auto rows_within_budget = [&] {
      return static_cast<std::int64_t>(
          std::floor((static_cast<double>(budget_) - fixed) / fit.bytes_per_row));
    };
    std::int64_t rows = std::clamp<std::int64_t>(rows_within_budget(), 0, batch_size_ - 1);
    std::int64_t last_rows = half, last_peak = half_peak;
    // One row, the cheapest step, is always measured: no message names it unmeasured.
    for (int probe = 0; (probe < kBatchSizeProbes || rows == 1) && rows >= 1; ++probe) {
      const std::int64_t peak = rows == half ? half_peak : floor(rows);
      if (peak <= budget_) return BatchFit{rows, peak, true, fit.bytes_per_row};
      if (rows == 1) {  // measured over the budget at one row: no batch size fits
        fit.peak_bytes = peak;
        fit.measured = true;
        return fit;
      }
      // The next guess follows the line through this measurement and the one before. The peak
      // is not linear in the rows (what does not grow with them weighs more at a few rows), so
      // the nearest two measurements predict the next better than the first slope did.
      if (rows != last_rows && (peak > last_peak) == (rows > last_rows)) {
        fit.bytes_per_row =
            static_cast<double>(peak - last_peak) / static_cast<double>(rows - last_rows);
        fixed = static_cast<double>(peak) - fit.bytes_per_row * static_cast<double>(rows);
      }
      last_rows = rows;
      last_peak = peak;
      rows = std::clamp<std::int64_t>(rows_within_budget(), 1, rows - 1);
    }
    // Out of probes: the extrapolation, where it fits.
    if (rows >= 1 && peak_at(rows) <= budget_) {
      return BatchFit{rows, peak_at(rows), false, fit.bytes_per_row};
    }
    fit.peak_bytes = peak_at(1);
    return fit;
  }

 private:
  TFTModel& model_;
  PlanningMeter& meter_;
  const CheckpointConfig& request_;
  std::int64_t budget_;
  std::int64_t batch_size_;
  StepMeasurement none_;
  std::vector<std::int64_t> workspace_;
};

std::string no_plan_fits(const TFTModel& model, const BudgetRequest& budget,
                         std::int64_t batch_size, std::int64_t floor_peak,
                         BoundaryDtype floor_dtype, const BatchFit& fit) {
  std::string text = "checkpoint.memory_budget: " + budget.source +
                     " fits no checkpoint plan at training.batch_size " +
                     std::to_string(batch_size) + ": the smallest peak is " +
                     format_bytes(floor_peak) + " (every unit checkpointed, " +
                     boundary_dtype_name(floor_dtype) + " boundaries); ";
  char per_row[64];
  std::snprintf(per_row, sizeof per_row, "%s per row",
                format_bytes(static_cast<std::int64_t>(std::llround(fit.bytes_per_row))).c_str());
  if (fit.rows >= 1) {
    text += "batch_size " + std::to_string(fit.rows) + " fits (" +
            (fit.measured ? "measured: " : "extrapolated from " + std::string(per_row) + ": ") +
            format_bytes(fit.peak_bytes) + ")";
  } else if (fit.bytes_per_row > 0.0) {
    text += "no batch_size fits (" +
            (fit.measured ? "measured: " : "extrapolated from " + std::string(per_row) + ": ") +
            format_bytes(fit.peak_bytes) + " at 1)";
  } else {
    text += "no smaller batch_size was measured to lower it";
  }
  text += "; ";
  if (model->precision() == Precision::Float32) text += "training.precision: bf16-mixed, ";
  text += "a shorter windows.encoder_length (now " +
          std::to_string(model->config().encoder_length) +
          ") or more model.unit_chunks (the floor holds the largest chunk's recompute) would "
          "also lower the peak";
  return text;
}

}  // namespace

CheckpointPlan plan_for_budget(TFTModel& model, const PlanningStep& step,
                               const CheckpointConfig& request, const BudgetRequest& budget,
                               std::int64_t batch_size, const c10::Device& device) {
  if (budget.bytes <= 0) {
    throw ConfigError("checkpoint.memory_budget: must be more than 0 bytes (got " +
                      std::to_string(budget.bytes) + ")");
  }
  // Puts the model, its gradients and the random state back however this ends.
  PlanningMeter meter(model, step, batch_size, device);
  BudgetPlanner planner(model, meter, request, budget.bytes, batch_size);
  // Forward only, first: the bytes each unit keeps checkpointed, and the warm-up.
  const StepMeasurement float32_forward =
      meter.measure(planner.every_unit(planner.like(BoundaryDtype::kFloat32)), {}, 0,
                    /*forward_only=*/true);
  planner.keep_workspace(float32_forward);
  planner.measure_none();
  const StepMeasurement& none = planner.none();

  CheckpointPlan plan;
  plan.unchecked_peak_bytes = none.peak_bytes;
  plan.unchecked_step_seconds = none.seconds;
  plan.target_peak_bytes = budget.bytes;
  plan.memory_fraction =
      none.peak_bytes > 0 ? static_cast<double>(budget.bytes) / static_cast<double>(none.peak_bytes)
                          : 1.0;
  plan.achievable = true;
  const auto finish = [&](const CheckpointConfig& like, const CheckpointChoice& choice,
                          const std::vector<UnitCost>& costs, const StepMeasurement& measured) {
    apply_choice(plan, like, choice, costs);
    plan.measured_peak_bytes = measured.peak_bytes;
    plan.planning_seconds = meter.seconds();
    BudgetOutcome outcome;
    outcome.budget_bytes = budget.bytes;
    outcome.source = budget.source;
    outcome.boundary_dtype = like.boundary_dtype;
    outcome.step_seconds = measured.seconds;
    outcome.step_cpu_seconds = measured.cpu_seconds;
    outcome.planning_steps = measured.seconds > 0 ? plan.planning_seconds / measured.seconds : 0;
    plan.planning_cpu_seconds = meter.cpu_seconds();
    outcome.planning_cpu_steps =
        measured.cpu_seconds > 0 ? plan.planning_cpu_seconds / measured.cpu_seconds : 0;
    plan.budget = outcome;
    return plan;
  };

  if (none.peak_bytes <= budget.bytes) {
    const std::vector<UnitCost> costs = planner.costs_from(float32_forward);
    CheckpointChoice nothing;
    nothing.checkpointed_chunks.assign(costs.size(), 0);
    nothing.predicted_peak_bytes = none.peak_bytes;
    nothing.fits = true;
    return finish(planner.like(BoundaryDtype::kFloat32), nothing, costs, none);
  }
  std::int64_t lowest_floor = -1;
  BoundaryDtype lowest_floor_dtype = BoundaryDtype::kFloat32;
  for (const BoundaryDtype dtype : kDtypesInOrder) {
    const auto outcome = planner.plan_dtype(
        dtype, dtype == BoundaryDtype::kFloat32 ? std::optional(float32_forward) : std::nullopt);
    plan.minimum_peak_bytes = std::max<std::int64_t>(0, outcome.floor_peak);
    if (outcome.verified) {
      CheckpointPlan chosen = finish(planner.like(dtype), outcome.verified->choice, outcome.costs,
                                     outcome.verified->measured);
      chosen.budget->first_fit_peak_bytes = outcome.verified->first_fit_peak_bytes;
      chosen.budget->recompute_seconds_saved = outcome.verified->recompute_seconds_saved;
      return chosen;
    }
    if (lowest_floor < 0 || outcome.floor_peak < lowest_floor) {
      lowest_floor = outcome.floor_peak;
      lowest_floor_dtype = dtype;
    }
  }
  const BatchFit fit = planner.largest_fitting_batch(lowest_floor_dtype, lowest_floor);
  throw MemoryBudgetError(
      no_plan_fits(model, budget, batch_size, lowest_floor, lowest_floor_dtype, fit));
}

}  // namespace tft
