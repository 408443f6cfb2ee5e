#include "checkpoint/planner.h"

#include <algorithm>

#include "common/error.h"

namespace tft {
namespace {

// One partial plan over the units seen so far.
struct Candidate {
  std::int64_t saved = 0;
  double seconds = 0.0;
  std::vector<std::int64_t> chunks;
};

// The chunk counts worth trying for a unit: 0 and 1..n, or kMaxChunkOptions even steps up to n.
std::vector<std::int64_t> chunk_options(const UnitCost& unit) {
  std::vector<std::int64_t> options{0};
  if (unit.saved_bytes <= 0) return options;  // checkpointing it would only cost time
  const std::int64_t n = unit.chunks;
  const std::int64_t steps = std::min(n, kMaxChunkOptions);
  for (std::int64_t s = 1; s <= steps; ++s) options.push_back(s * n / steps);
  return options;
}

// Keeps the plans no other plan beats on both counts (saves at least as much, no slower).
void keep_pareto_front(std::vector<Candidate>& plans) {
  std::sort(plans.begin(), plans.end(), [](const Candidate& a, const Candidate& b) {
    return a.saved != b.saved ? a.saved > b.saved : a.seconds < b.seconds;
  });
  std::vector<Candidate> front;
  for (Candidate& c : plans) {
    if (front.empty() || c.seconds < front.back().seconds) front.push_back(std::move(c));
  }
  plans = std::move(front);
}

}  // namespace

std::int64_t partial_saved_bytes(const UnitCost& unit, std::int64_t k) {
  if (k <= 0) return 0;
  if (k >= unit.chunks) return unit.saved_bytes;
  return static_cast<std::int64_t>(static_cast<double>(unit.saved_bytes) * static_cast<double>(k) /
                                   static_cast<double>(unit.chunks));
}

double partial_recompute_seconds(const UnitCost& unit, std::int64_t k) {
  if (k <= 0) return 0.0;
  if (k >= unit.chunks) return unit.recompute_seconds + unit.chunking_seconds;
  return unit.recompute_seconds * static_cast<double>(k) / static_cast<double>(unit.chunks) +
         unit.chunking_seconds;
}

std::int64_t predicted_peak_with_recompute(const std::vector<UnitCost>& units,
                                           const std::vector<std::int64_t>& checkpointed_chunks,
                                           std::int64_t baseline_peak_bytes) {
  const std::size_t n = std::min(units.size(), checkpointed_chunks.size());
  std::int64_t linear = baseline_peak_bytes;
  for (std::size_t i = 0; i < n; ++i)
    linear -= partial_saved_bytes(units[i], checkpointed_chunks[i]);
  std::int64_t peak = linear;
  std::int64_t freed_after = 0;  // held by the units after i, freed before i's backward
  for (std::size_t i = n; i-- > 0;) {
    const UnitCost& unit = units[i];
    const std::int64_t k = checkpointed_chunks[i];
    const std::int64_t saved = partial_saved_bytes(unit, k);
    const std::int64_t still_held = std::max<std::int64_t>(0, unit.held_bytes - saved);
    if (k > 0 && unit.saved_bytes > 0) {
      // u's un-checkpointed chunks run backward first (the checkpointed ones are its first k).
      const std::int64_t own_freed = std::max<std::int64_t>(0, unit.saved_bytes - saved);
      const std::int64_t chunk = unit.saved_bytes / std::max<std::int64_t>(1, unit.chunks);
      peak = std::max(peak, linear - freed_after - own_freed + chunk + unit.workspace_bytes);
    }
    freed_after += still_held;
  }
  return peak;
}

namespace {

// Every Pareto-optimal plan over all the units, most savings first (time falls with them);
// with min_chunks, only plans that checkpoint at least min_chunks[i] of unit i's chunks (where
// checkpointing it saves anything).
std::vector<Candidate> pareto_front(const std::vector<UnitCost>& units,
                                    const std::vector<std::int64_t>& min_chunks = {}) {
  for (const UnitCost& unit : units) {
    if (unit.chunks < 1) {
      throw ConfigError("checkpoint planner: unit " + unit.name + " has " +
                        std::to_string(unit.chunks) + " chunks; at least 1 is needed");
    }
  }
  // Unit by unit, every Pareto-optimal plan over the units so far. A plan off the front can't
  // be part of the cheapest plan within any budget: swapping in the plan that dominates it
  // saves at least as much for no more time.
  std::vector<Candidate> front{Candidate{}};
  for (std::size_t i = 0; i < units.size(); ++i) {
    const UnitCost& unit = units[i];
    std::vector<std::int64_t> options = chunk_options(unit);
    const std::int64_t at_least = i < min_chunks.size() ? min_chunks[i] : 0;
    if (options.size() > 1) {
      options.erase(std::remove_if(options.begin(), options.end(),
                                   [&](std::int64_t k) { return k < at_least; }),
                    options.end());
    }
    std::vector<Candidate> next;
    for (const std::int64_t k : options) {
      for (const Candidate& c : front) {
        Candidate extended = c;
        extended.saved += partial_saved_bytes(unit, k);
        extended.seconds += partial_recompute_seconds(unit, k);
        extended.chunks.push_back(k);
        next.push_back(std::move(extended));
      }
    }
    keep_pareto_front(next);
    front = std::move(next);
  }
  return front;
}

}  // namespace

CheckpointChoice choose_checkpoint_chunks(const std::vector<UnitCost>& units,
                                          std::int64_t baseline_peak_bytes,
                                          std::int64_t budget_bytes) {
  const std::vector<Candidate> front = pareto_front(units);
  // The front is sorted by savings, descending, and time falls with them: the last plan that
  // fits is the cheapest (and of equal-time plans, the front kept the one saving most).
  CheckpointChoice choice;
  const Candidate* best = nullptr;
  for (const Candidate& c : front) {
    if (baseline_peak_bytes - c.saved <= budget_bytes) best = &c;
  }
  choice.fits = best != nullptr;
  if (best == nullptr) best = &front.front();  // the most savings: every useful chunk
  choice.checkpointed_chunks = best->chunks;
  choice.predicted_peak_bytes = baseline_peak_bytes - best->saved;
  choice.predicted_recompute_seconds = best->seconds;
  return choice;
}

CheckpointChoice choose_checkpoint_chunks_with_recompute(
    const std::vector<UnitCost>& units, std::int64_t baseline_peak_bytes, std::int64_t budget_bytes,
    const std::vector<std::int64_t>& min_chunks) {
  const std::vector<Candidate> front = pareto_front(units, min_chunks);
  const auto choice_of = [&](const Candidate& c) {
    CheckpointChoice choice;
    choice.checkpointed_chunks = c.chunks;
    choice.predicted_peak_bytes =
        predicted_peak_with_recompute(units, c.chunks, baseline_peak_bytes);
    choice.predicted_recompute_seconds = c.seconds;
    choice.fits = choice.predicted_peak_bytes <= budget_bytes;
    return choice;
  };
  // From the cheapest plan up: the first that fits with its reruns counted is the cheapest.
  for (auto c = front.rbegin(); c != front.rend(); ++c) {
    CheckpointChoice choice = choice_of(*c);
    if (choice.fits) return choice;
  }
  return choice_of(front.front());  // the most savings, fits = false
}

}  // namespace tft
