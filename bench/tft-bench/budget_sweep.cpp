#include "budget_sweep.h"

#include "checkpoint/memory_budget.h"
#include "common/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <variant>

namespace tft::bench {
namespace {

std::string number(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

double planning_steps(const BudgetRow& row) {
  return row.step_seconds > 0 ? row.planning_seconds / row.step_seconds : 0.0;
}

double planning_cpu_steps(const BudgetRow& row) {
  return row.step_cpu_seconds > 0 ? row.planning_cpu_seconds / row.step_cpu_seconds : 0.0;
}

}  // namespace

BudgetList parse_budget_list(const std::string& text) {
  BudgetList list;
  const std::string sweep = "sweep:";
  if (text.rfind(sweep, 0) == 0) {
    const std::string count = text.substr(sweep.size());
    int points = 0;
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), points);
    if (ec != std::errc() || end != count.data() + count.size() || points < 2) {
      throw ConfigError("--memory-budget: '" + text + "': sweep:N needs a whole N >= 2");
    }
    list.sweep_points = points;
    return list;
  }
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    auto parsed = parse_memory_budget(entry);
    if (const auto* reason = std::get_if<std::string>(&parsed)) {
      throw ConfigError("--memory-budget: '" + entry + "': " + *reason + " (or sweep:N)");
    }
    const MemoryBudget budget = std::get<MemoryBudget>(parsed);
    if (budget.automatic) {
      throw ConfigError(
          "--memory-budget: auto is for training on a GPU (tft-train); the bench "
          "compares sizes");
    }
    list.bytes.push_back(budget.bytes);
  }
  if (list.bytes.empty()) throw ConfigError("--memory-budget: empty list");
  return list;
}

std::vector<std::int64_t> sweep_budgets(std::int64_t high, std::int64_t low, int points) {
  std::vector<std::int64_t> budgets;
  const double step = static_cast<double>(high - low) / static_cast<double>(points - 1);
  for (int i = 0; i < points; ++i) {
    budgets.push_back(
        i + 1 == points ? low : high - static_cast<std::int64_t>(step * static_cast<double>(i)));
  }
  return budgets;
}

double BudgetRow::ratio() const {
  return fastest_fixed_seconds > 0 && step_seconds > 0 ? step_seconds / fastest_fixed_seconds : 0.0;
}

double BudgetRow::cpu_ratio() const {
  return fastest_fixed_cpu_seconds > 0 && step_cpu_seconds > 0
             ? step_cpu_seconds / fastest_fixed_cpu_seconds
             : 0.0;
}

std::string budget_rows_to_markdown(const std::vector<BudgetRow>& rows) {
  std::string out =
      "| budget MiB | plan | boundaries | peak MiB (planner) | peak MiB (timed steps) | margin "
      "MiB | step ms | fastest fixed that fits | its ms | step / fastest | step CPU ms | "
      "fastest fixed that fits (CPU) | its CPU ms | CPU step / fastest | planning / step | "
      "planning / step (CPU) |\n"
      "|---:|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (const BudgetRow& r : rows) {
    const bool planned = r.error.empty();
    const bool wall = planned && !r.fastest_fixed.empty();
    const bool cpu = planned && !r.fastest_fixed_cpu.empty();
    const auto cell = [](bool shown, const std::string& text) { return shown ? text : ""; };
    const auto label = [](const std::string& name) {
      return name.empty() ? std::string("(none fits)") : "`" + name + "`";
    };
    out += "| " + number(mib(r.budget_bytes), "%.1f") + " | " +
           (planned ? r.plan : "no plan fits") + " | " + r.boundary_dtype + " | " +
           cell(planned, number(mib(r.planned_peak_bytes), "%.1f")) + " | " +
           cell(planned, number(mib(r.measured_peak_bytes), "%.1f")) + " | " +
           cell(planned, number(mib(r.budget_bytes - r.measured_peak_bytes), "%.1f")) + " | " +
           cell(planned, number(1e3 * r.step_seconds, "%.1f")) + " | " + label(r.fastest_fixed) +
           " | " + cell(wall, number(1e3 * r.fastest_fixed_seconds, "%.1f")) + " | " +
           cell(wall, number(r.ratio(), "%.3f")) + " | " +
           cell(planned, number(1e3 * r.step_cpu_seconds, "%.1f")) + " | " +
           label(r.fastest_fixed_cpu) + " | " +
           cell(cpu, number(1e3 * r.fastest_fixed_cpu_seconds, "%.1f")) + " | " +
           cell(cpu, number(r.cpu_ratio(), "%.3f")) + " | " +
           cell(planned, number(planning_steps(r), "%.2f")) + " | " +
           cell(planned, number(planning_cpu_steps(r), "%.2f")) + " |\n";
  }
  return out;
}

nlohmann::json budget_rows_to_json(const std::vector<BudgetRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const BudgetRow& r : rows) {
    list.push_back({{"budget_bytes", r.budget_bytes},
                    {"plan", r.plan},
                    {"boundary_dtype", r.boundary_dtype},
                    {"planned_peak_bytes", r.planned_peak_bytes},
                    {"measured_peak_bytes", r.measured_peak_bytes},
                    {"fits", r.fits()},
                    {"step_seconds", r.step_seconds},
                    {"fastest_fixed", r.fastest_fixed},
                    {"fastest_fixed_seconds", r.fastest_fixed_seconds},
                    {"fastest_fixed_peak_bytes", r.fastest_fixed_peak_bytes},
                    {"ratio", r.ratio()},
                    {"planning_seconds", r.planning_seconds},
                    {"planning_steps", planning_steps(r)},
                    {"step_cpu_seconds", r.step_cpu_seconds},
                    {"fastest_fixed_cpu", r.fastest_fixed_cpu},
                    {"fastest_fixed_cpu_seconds", r.fastest_fixed_cpu_seconds},
                    {"cpu_ratio", r.cpu_ratio()},
                    {"planning_cpu_seconds", r.planning_cpu_seconds},
                    {"planning_cpu_steps", planning_cpu_steps(r)},
                    {"error", r.error}});
  }
  return list;
}

std::string budget_rows_verdict(const std::vector<BudgetRow>& rows) {
  int planned = 0, misses = 0;
  double worst_ratio = 0.0, worst_cpu_ratio = 0.0, worst_planning = 0.0, worst_cpu_planning = 0.0;
  for (const BudgetRow& r : rows) {
    if (!r.error.empty()) continue;
    ++planned;
    if (!r.fits()) ++misses;
    worst_ratio = std::max(worst_ratio, r.ratio());
    worst_cpu_ratio = std::max(worst_cpu_ratio, r.cpu_ratio());
    worst_planning = std::max(worst_planning, planning_steps(r));
    worst_cpu_planning = std::max(worst_cpu_planning, planning_cpu_steps(r));
  }
  char counts[96];
  std::snprintf(counts, sizeof counts, "memory budgets: %d planned, %d over budget; ", planned,
                misses);
  // ratio() is 0 for a budget no fixed strategy in the run fits: nothing to compare with.
  char ratios[160] = "no fixed strategy of the run fits any of them; ";
  if (worst_ratio > 0.0) {
    std::snprintf(ratios, sizeof ratios,
                  "worst step / fastest fitting fixed strategy %.3f (CPU time %.3f); ", worst_ratio,
                  worst_cpu_ratio);
  }
  char planning[96];
  std::snprintf(planning, sizeof planning, "worst planning / step %.2f (CPU time %.2f)",
                worst_planning, worst_cpu_planning);
  return std::string(counts) + ratios + planning;
}

}  // namespace tft::bench
