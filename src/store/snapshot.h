// Snapshots: the saved state of a training run after an epoch, or after a step inside one
// (training.snapshot_every_steps), enough to continue it as if it had never stopped (bitwise
// the same weights and metrics on the same device and thread count).
//
// A sealed archive (sealed_archive.h: format "tftrain-snapshot", version 2, a SHA-256 over the
// payload, written atomically) whose payload holds
//   "state"       JSON text: epochs completed, the epoch in progress if any (its steps taken
//                 and their sums), LR-schedule and early-stopping state, the metrics history,
//                 timing and memory so far, whether training stopped early, the loss
//                 scaler's scale and growth tracker (16-mixed), and the model config (a
//                 snapshot of another model is refused)
//   "model"       the weights after the last epoch       } module_state.h layout
//   "best_model"  the weights of the best epoch so far   }
//   "optimizer"   Adam's state (LibTorch's serialisation: moments and step counts)
//   "rng_cpu"     the trainer's CPU generator's state; "rng_cuda" when training on CUDA
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

#include "checkpoint/rng_state.h"
#include "model/tft_model.h"
#include "optim/early_stopping.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "report/metrics.h"
#include "store/module_state.h"

namespace tft {

// The part of an epoch a snapshot taken inside it has done: its first `steps_done` steps (of
// the epoch's fixed batch order), what their losses summed to, and so on, so that the rest of
// the epoch adds up exactly as without the break.
struct EpochInProgress {
  std::int64_t steps_done = 0;
  double loss_sum = 0.0;  // sum over the steps' windows of the loss (this rank's)
  std::int64_t samples = 0;
  std::int64_t peak_activation_bytes = 0;
  double seconds = 0.0;
  double allreduce_seconds = 0.0;
};

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
  // Set when the snapshot was taken inside epoch epochs_completed + 1.
  std::optional<EpochInProgress> in_progress;
  // Set when the run scales its loss (training.precision: 16-mixed).
  std::optional<LossScalerState> loss_scaler;
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

// What a snapshot holds, for messages: "of epoch 2" after `epochs_completed` epochs, "of epoch
// 3, step 40" when `steps_done` steps of the next one were done too.
std::string snapshot_label(std::int64_t epochs_completed, std::int64_t steps_done);

// Reads a snapshot for `model` and loads the optimizer state into `optimizer` (whose
// parameters must be the model's). Nothing is put into the model; the caller applies
// Snapshot::model. IoError when the file is missing, truncated, damaged (the checksum) or not
// a snapshot; ConfigError when it was written for another model configuration;
// OutOfMemoryError when the machine has no memory to load it.
Snapshot load_snapshot(const std::filesystem::path& path, const TFTModel& model,
                       torch::optim::Optimizer& optimizer);

}  // namespace tft
