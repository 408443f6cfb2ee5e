#include "checkpoint/planner.h"

#include "common/error.h"

namespace tft {

UnitChoice choose_checkpoint_units(const std::vector<UnitCost>& units,
                                   std::int64_t baseline_peak_bytes, std::int64_t budget_bytes) {
  constexpr std::size_t kMaxUnits = 24;
  const std::size_t n = units.size();
  if (n > kMaxUnits) {
    throw ConfigError("checkpoint planner: " + std::to_string(n) + " units; at most " +
                      std::to_string(kMaxUnits) + " are planned exactly");
  }
  UnitChoice best;
  bool found = false;
  std::int64_t best_saved = 0;
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::int64_t saved = 0;
    double seconds = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) {
        saved += units[i].saved_bytes;
        seconds += units[i].recompute_seconds;
      }
    }
    if (baseline_peak_bytes - saved > budget_bytes) continue;
    if (!found || seconds < best.predicted_recompute_seconds ||
        (seconds == best.predicted_recompute_seconds && saved > best_saved)) {
      found = true;
      best_saved = saved;
      best.units.clear();
      for (std::size_t i = 0; i < n; ++i) {
        if (mask & (1u << i)) best.units.push_back(i);
      }
      best.predicted_recompute_seconds = seconds;
      best.predicted_peak_bytes = baseline_peak_bytes - saved;
    }
  }
  if (found) {
    best.fits = true;
    return best;
  }
  // Nothing fits: every unit that saves something gives the lowest predicted peak.
  UnitChoice lowest;
  std::int64_t saved = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (units[i].saved_bytes > 0) {
      lowest.units.push_back(i);
      saved += units[i].saved_bytes;
      lowest.predicted_recompute_seconds += units[i].recompute_seconds;
    }
  }
  lowest.predicted_peak_bytes = baseline_peak_bytes - saved;
  return lowest;
}

}  // namespace tft
