// tft-bench --memory-budget's runners: each budget planned (train/budget_planning.h) on its
// own copy of the model, and the budget rows built from the timed runners (budget_sweep.h).
#pragma once

#include "bench_runner.h"
#include "budget_sweep.h"

#include "model/model_config.h"
#include "nn/precision.h"

#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace tft::bench {

struct BudgetRunners {
  std::vector<Runner> runners;   // one per budget a plan fits, ready to time
  std::vector<BudgetRow> unfit;  // the others, with MemoryBudgetError's message
};

// `budgets`: --memory-budget's text (budget_sweep.h); a sweep measures its ends first. Every
// model starts from seed 0's weights, as the strategies' do. `same_partition`: plan with
// checkpoint.chunk_every_unit (tft-bench --bitwise).
BudgetRunners plan_budget_runners(const std::string& budgets, const ModelConfig& model_config,
                                  Precision precision, const TFTBatch& batch,
                                  const torch::Tensor& target, QuantileLoss& loss_fn,
                                  std::int64_t batch_size, const c10::Device& device,
                                  bool same_partition);

// A row per budget, the largest first: the planned runners' timed figures beside the fastest
// fixed runner (Runner::fixed) whose timed peak fits the same budget.
std::vector<BudgetRow> budget_rows(const std::vector<Runner>& runners,
                                   std::vector<BudgetRow> unfit);

}  // namespace tft::bench
