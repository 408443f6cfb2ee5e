// One strategy's share of a tft-bench run: its own copy of the model and Adam, the times and
// peak of its steps, and, for a planned one, what the planner chose.
#pragma once

#include "flop_counter.h"
#include "strategy_spec.h"

#include "common/device_kernel_counter.h"
#include "common/operator_counter.h"
#include "model/quantile_loss.h"
#include "model/tft_batch.h"
#include "model/tft_model.h"
#include "planning/planning_step.h"

#include <torch/optim/adam.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tft::bench {

struct Runner {
  StrategySpec spec;
  TFTModel model{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::vector<double> step_seconds, forward_seconds;
  // The process's CPU time per step (common/cpu_clock.h): a shared machine's other load
  // inflates it far less than wall time.
  std::vector<double> step_cpu_seconds;
  std::int64_t peak = 0;
  double first_loss = 0;
  std::vector<torch::Tensor> first_grads;
  std::string plan_summary;  // planned strategies: what the planner chose, and why
  std::string plan_choice;   // ... and just the units (and chunks)
  FlopCount flops;           // one counted step
  // The same step's operator calls by phase, and its host syncs (common/operator_counter.h).
  std::int64_t op_calls_forward = 0, op_calls_loss = 0, op_calls_backward = 0,
               op_calls_optimizer = 0, host_syncs = 0;
  // ... and the kernels it ran on a CUDA device (common/device_kernel_counter.h).
  std::optional<DeviceActivityCounts> device_kernels;
  // The step's phases from `ops`, the bench's own ("bench") left out.
  void record_operator_counts(const OperatorCounter& ops) {
    for (const auto& [name, counts] : ops.phases()) {
      if (name == "bench") continue;
      (name == "forward"    ? op_calls_forward
       : name == "loss"     ? op_calls_loss
       : name == "backward" ? op_calls_backward
                            : op_calls_optimizer) = counts.calls;
      host_syncs += counts.syncs;
    }
  }
  // --memory-budget runners (budget_runners.h): the budget (0: a strategy of --strategies),
  // what planning took and the peak the planner measured.
  std::int64_t budget_bytes = 0;
  double planning_seconds = 0;
  double planning_cpu_seconds = 0;
  std::int64_t planned_peak = 0;

  // Neither planned for a budget nor dynamic: one of the strategies budgets are compared with.
  bool fixed() const { return budget_bytes == 0 && spec.label.rfind("dynamic:", 0) != 0; }
};

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The planners' step: forward and loss on the first `rows` rows of the bench's batch. Holds
// references to its arguments.
inline PlanningStep planning_step(TFTModel& model, const TFTBatch& batch,
                                  const torch::Tensor& target, QuantileLoss& loss_fn) {
  return [&model, &batch, &target, &loss_fn](std::int64_t rows) {
    if (rows >= target.size(0)) return loss_fn(model->forward(batch).prediction, target);
    return loss_fn(model->forward(leading_rows(batch, rows)).prediction, target.slice(0, 0, rows));
  };
}

}  // namespace tft::bench
