#include "budget_runners.h"

#include "common/error.h"
#include "common/format.h"
#include "optim/fused_adam.h"
#include "optim/gradient_buffers.h"
#include "planning/budget_planning.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace tft::bench {
namespace {

TFTModel fresh_model(const ModelConfig& model_config, Precision precision,
                     const c10::Device& device) {
  torch::manual_seed(0);  // the same initial weights as every strategy's
  TFTModel model(model_config);
  model->to(device);
  model->train();
  model->set_precision(precision);  // before planning: the planner measures it
  ensure_gradients(model->parameters());
  return model;
}

}  // namespace

BudgetRunners plan_budget_runners(const std::string& budgets, const ModelConfig& model_config,
                                  Precision precision, const TFTBatch& batch,
                                  const torch::Tensor& target, QuantileLoss& loss_fn,
                                  std::int64_t batch_size, const c10::Device& device,
                                  bool same_partition) {
  const BudgetList list = parse_budget_list(budgets);
  std::vector<std::int64_t> sizes = list.bytes;
  if (list.sweep_points > 0) {
    // The sweep's ends, measured as the planners measure: none's peak and full+int8's.
    TFTModel probe = fresh_model(model_config, precision, device);
    PlanningMeter ends(probe, planning_step(probe, batch, target, loss_fn), batch_size, device);
    CheckpointConfig none = CheckpointConfig::none(), floor = CheckpointConfig::uniform(1);
    none.chunk_every_unit = floor.chunk_every_unit = same_partition;
    ends.measure(none);  // warm-up
    const std::int64_t high = ends.measure(none).peak_bytes;
    const std::int64_t low =
        ends.measure(floor.with_boundary_dtype(BoundaryDtype::kInt8)).peak_bytes;
    sizes = sweep_budgets(high, low, list.sweep_points);
    std::printf("memory budget sweep: %d budgets from none's %s down to full+int8's %s\n",
                list.sweep_points, format_bytes(high).c_str(), format_bytes(low).c_str());
  }
  BudgetRunners out;
  for (const std::int64_t bytes : sizes) {
    Runner r;
    r.budget_bytes = bytes;
    char label[64];
    std::snprintf(label, sizeof label, "budget:%.1fMiB",
                  static_cast<double>(bytes) / (1024.0 * 1024.0));
    r.spec.label = label;
    r.model = fresh_model(model_config, precision, device);
    // What a config with only checkpoint.memory_budget reads as (both sub-layer flags on).
    CheckpointConfig request =
        CheckpointConfig::none().with_checkpoint_attention(true).with_checkpoint_ffn(true);
    request.memory_budget = MemoryBudget::of_bytes(bytes);
    request.chunk_every_unit = same_partition;
    const auto started = std::chrono::steady_clock::now();
    try {
      const CheckpointPlan plan =
          plan_for_budget(r.model, planning_step(r.model, batch, target, loss_fn), request,
                          BudgetRequest{bytes, format_bytes(bytes)}, batch_size, device);
      r.model->set_checkpointing(plan.config);
      r.model->set_checkpointed_chunks(plan.chunk_limits);
      r.spec.config = plan.config;
      r.plan_summary = plan.summary();
      r.plan_choice = plan.chosen();
      r.planning_seconds = plan.planning_seconds;
      r.planning_cpu_seconds = plan.planning_cpu_seconds;
      r.planned_peak = plan.measured_peak_bytes;
      std::printf("%s: %s\n", label, r.plan_summary.c_str());
    } catch (const MemoryBudgetError& e) {
      BudgetRow row;
      row.budget_bytes = bytes;
      row.planning_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      row.error = e.what();
      out.unfit.push_back(row);
      std::printf("%s: %s\n", label, e.what());
      continue;
    }
    r.optimizer =
        std::make_unique<FusedAdam>(r.model->parameters(), torch::optim::AdamOptions(1e-3));
    out.runners.push_back(std::move(r));
  }
  return out;
}

std::vector<BudgetRow> budget_rows(const std::vector<Runner>& runners,
                                   std::vector<BudgetRow> unfit) {
  std::vector<BudgetRow> rows = std::move(unfit);
  for (const Runner& r : runners) {
    if (r.budget_bytes == 0) continue;
    BudgetRow row;
    row.budget_bytes = r.budget_bytes;
    row.plan = r.plan_choice;
    row.boundary_dtype = boundary_dtype_name(r.spec.config.boundary_dtype);
    row.planned_peak_bytes = r.planned_peak;
    row.measured_peak_bytes = r.peak;
    row.step_seconds = median(r.step_seconds);
    row.step_cpu_seconds = median(r.step_cpu_seconds);
    row.planning_seconds = r.planning_seconds;
    row.planning_cpu_seconds = r.planning_cpu_seconds;
    rows.push_back(row);
  }
  for (BudgetRow& row : rows) {
    for (const Runner& fixed : runners) {
      if (!fixed.fixed() || fixed.peak > row.budget_bytes) continue;
      const double seconds = median(fixed.step_seconds);
      if (row.fastest_fixed.empty() || seconds < row.fastest_fixed_seconds) {
        row.fastest_fixed = fixed.spec.label;
        row.fastest_fixed_seconds = seconds;
        row.fastest_fixed_peak_bytes = fixed.peak;
      }
      const double cpu = median(fixed.step_cpu_seconds);
      if (row.fastest_fixed_cpu.empty() || cpu < row.fastest_fixed_cpu_seconds) {
        row.fastest_fixed_cpu = fixed.spec.label;
        row.fastest_fixed_cpu_seconds = cpu;
      }
    }
  }
  std::sort(rows.begin(), rows.end(),
            [](const BudgetRow& a, const BudgetRow& b) { return a.budget_bytes > b.budget_bytes; });
  return rows;
}

}  // namespace tft::bench
