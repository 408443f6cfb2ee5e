// tft-bench --memory-budget: memory budgets planned for (checkpoint.memory_budget,
// train/budget_planning.h) and timed beside the fixed strategies of the same run, so that each
// budget's plan stands next to the fastest fixed strategy whose measured peak fits the same
// budget.
//
//   --memory-budget 700MiB,450MiB       these budgets (memory_budget's sizes, checkpoint/
//                                       memory_budget.h)
//   --memory-budget sweep:8             8 budgets evenly spaced from none's peak down to
//                                       full+int8's peak (both measured first), both ends
//                                       included
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tft::bench {

struct BudgetList {
  std::vector<std::int64_t> bytes;  // the budgets given as sizes
  int sweep_points = 0;             // sweep:N (then `bytes` is empty)
};

// ConfigError naming the entry and what is accepted.
BudgetList parse_budget_list(const std::string& text);

// `points` budgets from `high` down to `low`, both included (rounded down to whole bytes).
std::vector<std::int64_t> sweep_budgets(std::int64_t high, std::int64_t low, int points);

// One budget's row: the plan and its timing, and the fastest fixed strategy that fits.
struct BudgetRow {
  std::int64_t budget_bytes = 0;
  std::string plan;                      // CheckpointPlan::chosen(), or empty when nothing fits
  std::string boundary_dtype;            // the plan's
  std::int64_t planned_peak_bytes = 0;   // measured by the planner
  std::int64_t measured_peak_bytes = 0;  // the largest of the timed steps
  double step_seconds = 0.0;             // median of the timed steps
  std::string fastest_fixed;             // its label; empty when no fixed strategy fits
  double fastest_fixed_seconds = 0.0;
  std::int64_t fastest_fixed_peak_bytes = 0;
  // The same in the process's CPU time, the measure a shared machine disturbs least (the
  // fastest fixed strategy by it may be another one).
  double step_cpu_seconds = 0.0;
  std::string fastest_fixed_cpu;
  double fastest_fixed_cpu_seconds = 0.0;
  double planning_seconds = 0.0;
  double planning_cpu_seconds = 0.0;
  std::string error;  // MemoryBudgetError's message when nothing fits

  bool fits() const { return error.empty() && measured_peak_bytes <= budget_bytes; }
  // step / the fastest fitting fixed strategy's, in wall and in CPU time; 0 without both.
  double ratio() const;
  double cpu_ratio() const;
};

// Markdown table: budget, plan, boundaries, peaks, margin; step ms, the fastest fixed strategy
// that fits, its step ms and the ratio, in wall time and in CPU time; planning / step in both.
std::string budget_rows_to_markdown(const std::vector<BudgetRow>& rows);

// [{"budget_bytes", "plan", "boundary_dtype", "planned_peak_bytes", "measured_peak_bytes",
//   "fits", "step_seconds", "fastest_fixed", "fastest_fixed_seconds",
//   "fastest_fixed_peak_bytes", "ratio", "step_cpu_seconds", "fastest_fixed_cpu",
//   "fastest_fixed_cpu_seconds", "cpu_ratio", "planning_seconds", "planning_steps",
//   "planning_cpu_seconds", "planning_cpu_steps", "error"}, ...]
nlohmann::json budget_rows_to_json(const std::vector<BudgetRow>& rows);

// One line per run: misses (peak over budget), the worst ratios, the largest planning / step.
std::string budget_rows_verdict(const std::vector<BudgetRow>& rows);

}  // namespace tft::bench
