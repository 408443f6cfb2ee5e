#include "checkpoint/checkpoint_config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <type_traits>
#include <utility>

#include "common/error.h"
#include "common/format.h"

namespace tft {

namespace {

std::optional<CheckpointProblem> problem(const char* field, std::string rule) {
  return CheckpointProblem{field, std::string("checkpoint.") + field + ": " + std::move(rule)};
}

std::optional<CheckpointProblem> check_dynamic(const DynamicStrategy& d) {
  if (d.num_layers == 0) return problem("num_layers", "must be at least 1 (got 0)");
  if (!std::isfinite(d.memory_fraction) || d.memory_fraction < 0.0 || d.memory_fraction > 1.0) {
    return problem("memory_fraction", "must be a finite number in [0, 1] (got " +
                                          shortest_double(d.memory_fraction) + ")");
  }
  return std::nullopt;
}

// A budget is the planner's input: it picks the units (so no other strategy) and the boundary
// dtype (float32 first, compressed only when float32 cannot fit).
std::optional<CheckpointProblem> check_memory_budget(const CheckpointConfig& c) {
  const MemoryBudget& budget = *c.memory_budget;
  if (!budget.automatic && budget.bytes <= 0) {
    return problem("memory_budget",
                   "must be more than 0 bytes (got " + std::to_string(budget.bytes) + ")");
  }
  if (std::holds_alternative<DynamicStrategy>(c.strategy)) {
    return problem("memory_budget",
                   "give either strategy 'dynamic' (memory_fraction: a fraction of the "
                   "un-checkpointed peak) or memory_budget (an absolute size), not both");
  }
  if (!std::holds_alternative<NoCheckpointing>(c.strategy)) {
    return problem("memory_budget", "strategy '" + c.strategy_name() +
                                        "' fixes the units to checkpoint, and a budget plans "
                                        "them: give one of them");
  }
  if (c.boundary_dtype != BoundaryDtype::kFloat32) {
    return problem("boundary_dtype",
                   "with memory_budget the planner chooses the boundaries (float32, then "
                   "bfloat16, then int8 only when float32 cannot fit): leave boundary_dtype "
                   "out (got " +
                       boundary_dtype_name(c.boundary_dtype) + ")");
  }
  return std::nullopt;
}

// Shared by both find_problem overloads; num_units is null when the model size is unknown.
std::optional<CheckpointProblem> find(const CheckpointConfig& c, const std::size_t* num_units) {
  std::optional<CheckpointProblem> p = std::visit(
      [num_units](const auto& s) -> std::optional<CheckpointProblem> {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, UniformStrategy>) {
          if (s.interval == 0) return problem("interval", "must be at least 1 (got 0)");
        } else if constexpr (std::is_same_v<S, SelectiveStrategy>) {
          std::set<std::size_t> seen;
          for (std::size_t index : s.layers) {
            if (num_units != nullptr && index >= *num_units) {
              return problem("layers", "index " + std::to_string(index) + " is out of range for " +
                                           std::to_string(*num_units) + " units");
            }
            if (!seen.insert(index).second) {
              return problem("layers", "duplicate index " + std::to_string(index));
            }
          }
        } else if constexpr (std::is_same_v<S, DynamicStrategy>) {
          return check_dynamic(s);
        }
        return std::nullopt;
      },
      c.strategy);
  if (p) return p;
  if (c.min_checkpoint_interval == 0) {
    return problem("min_checkpoint_interval", "must be at least 1 (got 0)");
  }
  if (c.memory_budget) return check_memory_budget(c);
  return std::nullopt;
}

std::string strategy_summary(const CheckpointConfig& c) {
  const CheckpointStrategy& strategy = c.strategy;
  if (const auto* u = std::get_if<UniformStrategy>(&strategy)) {
    return "Uniform checkpointing every " + std::to_string(u->interval) + " layers";
  }
  if (const auto* s = std::get_if<SelectiveStrategy>(&strategy)) {
    return "Selective checkpointing at " + std::to_string(s->layers.size()) + " layers";
  }
  if (const auto* d = std::get_if<DynamicStrategy>(&strategy)) {
    char percent[64];
    std::snprintf(percent, sizeof percent, "%.1f", d->memory_fraction * 100.0);
    return "Dynamic checkpointing (" + std::to_string(d->num_layers) + " layers, " + percent +
           "% memory target)";
  }
  return "No checkpointing";
}

CheckpointConfig with_strategy(CheckpointStrategy strategy) {
  CheckpointConfig c;
  c.strategy = std::move(strategy);
  c.checkpoint_attention = true;
  c.checkpoint_ffn = true;
  c.min_checkpoint_interval = 1;
  return c;
}

}  // namespace

bool operator==(const NoCheckpointing&, const NoCheckpointing&) { return true; }
bool operator!=(const NoCheckpointing&, const NoCheckpointing&) { return false; }
bool operator==(const UniformStrategy& a, const UniformStrategy& b) {
  return a.interval == b.interval;
}
bool operator!=(const UniformStrategy& a, const UniformStrategy& b) { return !(a == b); }
bool operator==(const SelectiveStrategy& a, const SelectiveStrategy& b) {
  return a.layers == b.layers;
}
bool operator!=(const SelectiveStrategy& a, const SelectiveStrategy& b) { return !(a == b); }
bool operator==(const DynamicStrategy& a, const DynamicStrategy& b) {
  return a.num_layers == b.num_layers && a.memory_fraction == b.memory_fraction;
}
bool operator!=(const DynamicStrategy& a, const DynamicStrategy& b) { return !(a == b); }

bool operator==(const CheckpointConfig& a, const CheckpointConfig& b) {
  return a.strategy == b.strategy && a.checkpoint_attention == b.checkpoint_attention &&
         a.checkpoint_ffn == b.checkpoint_ffn &&
         a.min_checkpoint_interval == b.min_checkpoint_interval &&
         a.boundary_dtype == b.boundary_dtype && a.memory_budget == b.memory_budget &&
         a.chunk_every_unit == b.chunk_every_unit;
}
bool operator!=(const CheckpointConfig& a, const CheckpointConfig& b) { return !(a == b); }

CheckpointConfig CheckpointConfig::uniform(std::size_t interval) {
  return with_strategy(UniformStrategy{interval});
}

CheckpointConfig CheckpointConfig::selective(std::vector<std::size_t> layers) {
  return with_strategy(SelectiveStrategy{std::move(layers)});
}

CheckpointConfig CheckpointConfig::dynamic(std::size_t num_layers, double memory_fraction) {
  DynamicStrategy d{num_layers, memory_fraction};
  if (auto p = check_dynamic(d)) throw ConfigError(p->message);
  return with_strategy(d);
}

CheckpointConfig CheckpointConfig::none() { return CheckpointConfig{}; }

CheckpointConfig CheckpointConfig::with_checkpoint_attention(bool checkpoint) const {
  CheckpointConfig c = *this;
  c.checkpoint_attention = checkpoint;
  return c;
}

CheckpointConfig CheckpointConfig::with_checkpoint_ffn(bool checkpoint) const {
  CheckpointConfig c = *this;
  c.checkpoint_ffn = checkpoint;
  return c;
}

CheckpointConfig CheckpointConfig::with_min_interval(std::size_t interval) const {
  CheckpointConfig c = *this;
  c.min_checkpoint_interval = interval;
  return c;
}

CheckpointConfig CheckpointConfig::with_boundary_dtype(BoundaryDtype dtype) const {
  CheckpointConfig c = *this;
  c.boundary_dtype = dtype;
  return c;
}

std::size_t CheckpointConfig::dynamic_interval() const {
  const auto* d = std::get_if<DynamicStrategy>(&strategy);
  if (d == nullptr) return 0;
  const double product = d->memory_fraction * static_cast<double>(d->num_layers);
  // trunc(f * n); guarded so a bad fraction set directly never converts NaN to an integer.
  std::size_t interval = 0;
  if (std::isfinite(product) && product >= 1.0) {
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    // Saturate instead of overflowing the conversion (only reachable with a bad fraction).
    interval =
        product >= static_cast<double>(kMax) ? kMax : static_cast<std::size_t>(std::trunc(product));
  }
  if (interval < 1) interval = 1;
  if (interval < min_checkpoint_interval) interval = min_checkpoint_interval;
  return interval;
}

bool CheckpointConfig::should_checkpoint(std::size_t layer_idx) const {
  if (const auto* u = std::get_if<UniformStrategy>(&strategy)) {
    return u->interval > 0 && layer_idx % u->interval == 0;
  }
  if (const auto* s = std::get_if<SelectiveStrategy>(&strategy)) {
    for (std::size_t index : s->layers) {
      if (index == layer_idx) return true;
    }
    return false;
  }
  if (std::holds_alternative<DynamicStrategy>(strategy)) {
    return layer_idx % dynamic_interval() == 0;
  }
  return false;
}

double CheckpointConfig::memory_savings(std::size_t num_layers) const {
  const double n = static_cast<double>(num_layers);
  if (const auto* u = std::get_if<UniformStrategy>(&strategy)) {
    const std::size_t k = u->interval;
    if (k == 0 || k >= num_layers) return 0.0;
    const std::size_t checkpointed = (num_layers + k - 1) / k;  // ceil(n / k)
    return 1.0 - static_cast<double>(checkpointed) / n;
  }
  if (const auto* s = std::get_if<SelectiveStrategy>(&strategy)) {
    if (s->layers.empty() || num_layers == 0) return 0.0;  // n == 0: deviation, see header
    return 1.0 - static_cast<double>(s->layers.size()) / n;
  }
  if (const auto* d = std::get_if<DynamicStrategy>(&strategy)) {
    return 1.0 - d->memory_fraction;
  }
  return 0.0;
}

double CheckpointConfig::compute_overhead(std::size_t num_layers) const {
  const double n = static_cast<double>(num_layers);
  if (const auto* u = std::get_if<UniformStrategy>(&strategy)) {
    const std::size_t k = u->interval;
    if (k == 0 || k >= num_layers) return 1.0;
    return 1.0 + static_cast<double>(k / 2) / n;
  }
  if (const auto* s = std::get_if<SelectiveStrategy>(&strategy)) {
    if (s->layers.empty() || num_layers == 0) return 1.0;  // n == 0: deviation, see header
    const std::size_t segment = num_layers / s->layers.size();
    return 1.0 + static_cast<double>(segment / 2) / n;
  }
  if (const auto* d = std::get_if<DynamicStrategy>(&strategy)) {
    return 1.0 + (1.0 - d->memory_fraction) * 0.3;
  }
  return 1.0;
}

std::optional<CheckpointProblem> CheckpointConfig::find_problem() const {
  return find(*this, nullptr);
}

std::optional<CheckpointProblem> CheckpointConfig::find_problem(std::size_t num_units) const {
  return find(*this, &num_units);
}

void CheckpointConfig::validate() const {
  if (auto p = find_problem()) throw ConfigError(p->message);
}

void CheckpointConfig::validate(std::size_t num_units) const {
  if (auto p = find_problem(num_units)) throw ConfigError(p->message);
}

std::string CheckpointConfig::summary() const {
  if (memory_budget && std::holds_alternative<NoCheckpointing>(strategy)) {
    return "Checkpointing planned for a memory budget of " + memory_budget_shown(*memory_budget);
  }
  std::string text = strategy_summary(*this);
  if (boundary_dtype != BoundaryDtype::kFloat32) {
    text += ", " + boundary_dtype_name(boundary_dtype) + " boundaries";
  }
  if (chunk_every_unit) text += ", every unit in its chunks";
  return text;
}

std::string CheckpointConfig::strategy_name() const {
  if (std::holds_alternative<UniformStrategy>(strategy)) return "uniform";
  if (std::holds_alternative<SelectiveStrategy>(strategy)) return "selective";
  if (std::holds_alternative<DynamicStrategy>(strategy)) return "dynamic";
  return "none";
}

}  // namespace tft
