// The tft_train_report handle: a finished run's figures as the C structs the getters copy
// out, so it outlives the trainer that made it. Also the conversions of the core's metrics
// and memory reports, which tft_trainer_evaluate and tft_trainer_measure_memory share.
#pragma once

#include "api_guard.h"

#include "train/trainer.h"

struct tft_train_report {
  static constexpr std::uint64_t kMagic = 0x74667472707274ULL;  // "tftrprt"
  static constexpr const char* kTypeName = "tft_train_report";
  tft_train_summary summary{};
  tft_metrics validation{};
  tft_memory_report memory{};
};

namespace tft::capi {

tft_metrics to_c(const ValidationMetrics& metrics);
// A trainer's progress as the callback receives it, with a backtest's fold and folds (0, 0
// outside one).
tft_progress to_c(const TrainProgress& progress, std::int64_t fold, std::int64_t folds);
tft_memory_report to_c(const MemoryReport& memory);

// A new report handle for `report`.
tft_train_report* make_train_report(const TrainReport& report);

}  // namespace tft::capi
