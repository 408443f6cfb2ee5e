#include "train/checkpoint_plan.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "train/progress_printer.h"  // format_bytes

namespace tft {

std::string CheckpointPlan::summary() const {
  std::string chosen;
  for (const PlannedUnit& u : units) {
    if (u.checkpointed) chosen += (chosen.empty() ? "" : ", ") + u.name;
  }
  if (chosen.empty()) chosen = "no unit";
  const double unchecked = static_cast<double>(unchecked_peak_bytes);
  char buf[256];
  std::snprintf(buf, sizeof buf, "planned for %.0f%% of %s: %s; measured %s (%.1f%%), predicted %s, "
                "+%.0f ms recompute per step",
                100.0 * memory_fraction, format_bytes(unchecked_peak_bytes).c_str(), chosen.c_str(),
                format_bytes(measured_peak_bytes).c_str(),
                unchecked > 0 ? 100.0 * static_cast<double>(measured_peak_bytes) / unchecked : 0.0,
                format_bytes(predicted_peak_bytes).c_str(), 1e3 * predicted_recompute_seconds);
  std::string text = buf;
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
                    {"saved_bytes", u.saved_bytes},
                    {"recompute_seconds", u.recompute_seconds},
                    {"checkpointed", u.checkpointed}});
  }
  j["units"] = std::move(list);
  return j;
}

}  // namespace tft
