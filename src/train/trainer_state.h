// What a Trainer holds between calls (internal to src/train): the config and data, the model,
// its loss and optimizer, the sampler, the weights and random state every fresh run starts
// from, the best weights so far and the data-parallel job. Shared by the trainer's source
// files (trainer.cpp, training_run.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <torch/optim/adam.h>

#include "checkpoint/rng_state.h"
#include "common/compute_threads.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"
#include "model/model_config.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "optim/fused_adam.h"
#include "optim/loss_scaler.h"
#include "planning/checkpoint_plan.h"
#include "report/calibration.h"
#include "store/module_state.h"
#include "train/data_parallel.h"
#include "train/isolation.h"

namespace tft {

struct TrainerState {
  TrainConfig config;
  TimeSeriesDataset dataset;
  ModelConfig model_config;
  c10::Device device{c10::kCPU};
  TFTModel model{nullptr};
  QuantileLoss loss{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer;
  // training.precision 16-mixed only: float16 gradients need loss scaling.
  std::optional<LossScaler> loss_scaler;
  std::optional<WindowSampler> sampler;
  ModuleState initial_weights;
  RngState initial_rng;
  ModuleState best_weights;
  // output.calibration's correction, fitted when a run finishes (none before).
  QuantileCalibration calibration;
  std::optional<CheckpointPlan> plan;      // dynamic checkpointing: what the model runs
  std::unique_ptr<DataParallel> parallel;  // this process's rank in a job (a group of one alone)
  Isolation isolation;  // this trainer's generators, recompute clock and memory account
  // The intra-op threads as last set: at creation, and with training.threads 0 (auto) again at
  // every epoch, from the CPUs free then (common/cpu_share.h).
  ComputeThreads compute_threads;
  int compute_thread_changes = 0;  // auto: how often an epoch found another number free
  // False for center auto's pilot fits (Trainer::write_no_files): no snapshot, metrics.jsonl,
  // model/ or forecast files.
  bool writes_files = true;
  // A refit's saved model (training.init_from, refit.h): its folder and SHA-256; empty otherwise.
  std::string init_from;
  std::string init_from_sha256;

  TrainerState(TrainConfig c, TimeSeriesDataset d)
      : config(std::move(c)), dataset(std::move(d)), isolation(config.training.seed) {}

  // Whether this trainer writes the run's files: rank 0 of a job, unless writes_files is off.
  bool writes_outputs() const { return writes_files && parallel->writes_outputs(); }

  // This rank's share of each of the epoch's global batches (data_parallel.h).
  std::vector<RankBatch> epoch_batches(std::int64_t epoch) const {
    return parallel->rank_batches(sampler->epoch_batches(static_cast<std::uint64_t>(epoch)));
  }

  // A fresh Adam (AdamW with training.weight_decay), and a fresh loss scaler with it for
  // 16-mixed (GradScaler's state is the optimizer's companion: both start over, and both go
  // into snapshots).
  void new_optimizer() {
    optimizer = std::make_unique<FusedAdam>(
        model->parameters(), torch::optim::AdamOptions(config.training.learning_rate),
        config.training.weight_decay);
    loss_scaler.reset();
    if (config.training.precision == Precision::Fp16Mixed) loss_scaler.emplace(device);
  }

  // What a snapshot keeps of the loss scaler (nothing without one).
  std::optional<LossScalerState> loss_scaler_state() const {
    if (!loss_scaler) return std::nullopt;
    return loss_scaler->state();
  }
};

}  // namespace tft
