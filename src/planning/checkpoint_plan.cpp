#include "planning/checkpoint_plan.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/format.h"  // format_bytes

namespace tft {

std::string CheckpointPlan::chosen() const {
  std::string text;
  for (const PlannedUnit& u : units) {
    if (!u.checkpointed()) continue;
    text += (text.empty() ? "" : ", ") + u.name;
    if (u.checkpointed_chunks < u.chunks) {
      text += " (" + std::to_string(u.checkpointed_chunks) + " of " + std::to_string(u.chunks) +
              " chunks)";
    }
  }
  return text.empty() ? "no unit" : text;
}

std::string CheckpointPlan::replaced_first_fit() const {
  if (!budget || budget->first_fit_peak_bytes <= 0) return "";
  char saved[32];
  std::snprintf(saved, sizeof saved, "%.0f", 1e3 * budget->recompute_seconds_saved);
  return std::string(" (") + saved + " ms less than the first plan that fitted, which measured " +
         format_bytes(budget->first_fit_peak_bytes) + ")";
}

std::string CheckpointPlan::summary() const {
  char milliseconds[32];
  std::snprintf(milliseconds, sizeof milliseconds, "%.0f", 1e3 * predicted_recompute_seconds);
  if (budget) {
    char planning[128];
    std::snprintf(planning, sizeof planning,
                  "planned in %.2f s = %.1f steps of %.3f s (in CPU time %.1f steps)",
                  planning_seconds, budget->planning_steps, budget->step_seconds,
                  budget->planning_cpu_steps);
    return "budget " + budget->source + " -> " + chosen() + ", " +
           boundary_dtype_name(budget->boundary_dtype) + " boundaries; measured " +
           format_bytes(measured_peak_bytes) + " (margin " +
           format_bytes(budget->margin_bytes(measured_peak_bytes)) + "), predicted " +
           format_bytes(predicted_peak_bytes) + ", unchecked " +
           format_bytes(unchecked_peak_bytes) + ", +" + milliseconds + " ms recompute per step" +
           replaced_first_fit() + "; " + planning;
  }
  const double unchecked = static_cast<double>(unchecked_peak_bytes);
  char asked[32], measured[32];
  std::snprintf(asked, sizeof asked, "%.0f%%", 100.0 * memory_fraction);
  std::snprintf(measured, sizeof measured, "%.1f%%",
                unchecked > 0 ? 100.0 * static_cast<double>(measured_peak_bytes) / unchecked : 0.0);
  std::string text = std::string("planned for ") + asked + " of " +
                     format_bytes(unchecked_peak_bytes) + ": " + chosen() + "; measured " +
                     format_bytes(measured_peak_bytes) + " (" + measured + "), predicted " +
                     format_bytes(predicted_peak_bytes) + ", +" + milliseconds +
                     " ms recompute per step";
  if (!achievable) {
    text += "; the target " + format_bytes(target_peak_bytes) +
            " is not reachable: the minimum is " + format_bytes(minimum_peak_bytes) +
            " (every unit checkpointed)";
  }
  return text;
}

nlohmann::ordered_json CheckpointPlan::to_json() const {
  nlohmann::ordered_json j;
  j["memory_fraction"] = memory_fraction;
  j["achievable"] = achievable;
  j["unchecked_peak_bytes"] = unchecked_peak_bytes;
  j["target_peak_bytes"] = target_peak_bytes;
  j["minimum_peak_bytes"] = minimum_peak_bytes;
  j["predicted_peak_bytes"] = predicted_peak_bytes;
  j["measured_peak_bytes"] = measured_peak_bytes;
  j["unchecked_step_seconds"] = unchecked_step_seconds;
  j["predicted_recompute_seconds"] = predicted_recompute_seconds;
  j["planning_seconds"] = planning_seconds;
  j["planning_cpu_seconds"] = planning_cpu_seconds;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PlannedUnit& u : units) {
    list.push_back({{"name", u.name},
                    {"chunks", u.chunks},
                    {"saved_bytes", u.saved_bytes},
                    {"recompute_seconds", u.recompute_seconds},
                    {"checkpointed", u.checkpointed()},
                    {"checkpointed_chunks", u.checkpointed_chunks},
                    {"planned_saved_bytes", u.planned_saved_bytes},
                    {"kept_bytes", u.kept_bytes},
                    {"planned_recompute_seconds", u.planned_recompute_seconds}});
  }
  j["units"] = std::move(list);
  if (budget) {
    j["memory_budget"] = {{"budget_bytes", budget->budget_bytes},
                          {"source", budget->source},
                          {"boundary_dtype", boundary_dtype_name(budget->boundary_dtype)},
                          {"margin_bytes", budget->margin_bytes(measured_peak_bytes)},
                          {"step_seconds", budget->step_seconds},
                          {"step_cpu_seconds", budget->step_cpu_seconds},
                          {"planning_steps", budget->planning_steps},
                          {"planning_cpu_steps", budget->planning_cpu_steps},
                          {"first_fit_peak_bytes", budget->first_fit_peak_bytes},
                          {"recompute_seconds_saved", budget->recompute_seconds_saved}};
  }
  return j;
}

PlanSetting setting_for(const CheckpointConfig& like, const CheckpointChoice& choice,
                        const std::vector<UnitCost>& costs) {
  std::vector<std::size_t> units;
  PlanSetting setting;
  for (std::size_t i = 0; i < choice.checkpointed_chunks.size(); ++i) {
    const std::int64_t k = choice.checkpointed_chunks[i];
    if (k <= 0) continue;
    units.push_back(i);
    if (k < costs[i].chunks) setting.limits[i] = k;
  }
  setting.config = CheckpointConfig::selective(std::move(units));
  setting.config.checkpoint_attention = like.checkpoint_attention;
  setting.config.checkpoint_ffn = like.checkpoint_ffn;
  setting.config.boundary_dtype = like.boundary_dtype;
  setting.config.chunk_every_unit = like.chunk_every_unit;
  return setting;
}

void apply_choice(CheckpointPlan& plan, const CheckpointConfig& like,
                  const CheckpointChoice& choice, const std::vector<UnitCost>& costs) {
  plan.predicted_peak_bytes = choice.predicted_peak_bytes;
  plan.predicted_recompute_seconds = choice.predicted_recompute_seconds;
  plan.units.clear();
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const UnitCost& c = costs[i];
    const std::int64_t k = choice.checkpointed_chunks[i];
    PlannedUnit unit{c.name, c.chunks, c.saved_bytes, c.recompute_seconds, k};
    unit.planned_saved_bytes = partial_saved_bytes(c, k);
    unit.kept_bytes = std::max<std::int64_t>(0, c.saved_bytes - unit.planned_saved_bytes);
    unit.planned_recompute_seconds = partial_recompute_seconds(c, k);
    plan.units.push_back(std::move(unit));
  }
  PlanSetting setting = setting_for(like, choice, costs);
  plan.config = std::move(setting.config);
  plan.chunk_limits = std::move(setting.limits);
}

}  // namespace tft
