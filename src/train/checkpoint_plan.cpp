#include "train/checkpoint_plan.h"

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

std::string CheckpointPlan::summary() const {
  const double unchecked = static_cast<double>(unchecked_peak_bytes);
  char asked[32], measured[32], milliseconds[32];
  std::snprintf(asked, sizeof asked, "%.0f%%", 100.0 * memory_fraction);
  std::snprintf(measured, sizeof measured, "%.1f%%",
                unchecked > 0 ? 100.0 * static_cast<double>(measured_peak_bytes) / unchecked : 0.0);
  std::snprintf(milliseconds, sizeof milliseconds, "%.0f", 1e3 * predicted_recompute_seconds);
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
  return j;
}

}  // namespace tft
