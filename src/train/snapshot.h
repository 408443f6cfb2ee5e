// Snapshots: the saved state of a training run after an epoch, enough to continue it as if it
// had never stopped (bitwise the same weights on the same device and thread count).
//
// One LibTorch archive (written atomically: temporary file, then rename):
//   "format"      "tftrain-snapshot", "version" 1
//   "state"       JSON text: epochs completed, LR-schedule and early-stopping state, the
//                 metrics history, timing and memory so far, whether training stopped early,
//                 and the model config (a snapshot of another model is refused)
//   "model"       the weights after the last epoch       } module_state.h layout
//   "best_model"  the weights of the best epoch so far   }
//   "optimizer"   Adam's state (LibTorch's serialisation: moments and step counts)
//   "rng_cpu"     the default CPU generator's state; "rng_cuda" when training on CUDA
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

#include "model/tft_model.h"
#include "train/early_stopping.h"
#include "train/lr_schedule.h"
#include "train/metrics.h"
#include "train/module_state.h"
#include "train/rng_state.h"

namespace tft {

struct SnapshotState {
  std::int64_t epochs_completed = 0;
  bool stopped_early = false;
  double initial_validation_loss = std::numeric_limits<double>::quiet_NaN();
  double train_seconds = 0.0;
  std::int64_t train_samples = 0;
  std::int64_t peak_activation_bytes = 0;
  LrSchedule::State lr_schedule;
  EarlyStopping::State early_stopping;
  std::vector<EpochMetrics> history;
};

struct Snapshot {
  SnapshotState state;
  ModuleState model;
  ModuleState best_model;
  RngState rng;
};

// Writes a snapshot of `model` (its weights now), `best_model`, `optimizer` and `rng`.
void save_snapshot(const std::filesystem::path& path, const SnapshotState& state,
                   const TFTModel& model, const ModuleState& best_model,
                   const torch::optim::Optimizer& optimizer, const RngState& rng);

// Reads a snapshot for `model` and loads the optimizer state into `optimizer` (whose
// parameters must be the model's). Nothing is put into the model; the caller applies
// Snapshot::model. IoError when the file is missing, corrupt or not a snapshot; ConfigError
// when it was written for another model configuration.
Snapshot load_snapshot(const std::filesystem::path& path, const TFTModel& model,
                       torch::optim::Optimizer& optimizer);

}  // namespace tft
