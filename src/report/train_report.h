// What a training run reports: progress while it runs (TrainProgress, passed to the progress
// callback), the result (TrainReport) and the activation memory figures (MemoryReport).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <optional>

#include "planning/checkpoint_plan.h"
#include "report/baselines.h"
#include "report/calibration.h"
#include "report/metrics.h"

namespace tft {

struct TrainProgress {
  enum class Kind {
    Step,   // after each optimisation step
    Epoch,  // after each epoch's validation (metrics set)
  };
  Kind kind = Kind::Step;
  std::int64_t epoch = 0;           // 1-based
  std::int64_t epochs = 0;          // configured training.epochs
  std::int64_t step = 0;            // 1-based within the epoch (== steps at Kind::Epoch)
  std::int64_t steps = 0;           // steps of this epoch
  double loss = 0.0;                // mean training loss of the epoch so far (on a GPU: over the
                                    // steps read back from it, at most 0.1 s behind)
  double samples_per_second = 0.0;  // this epoch so far
  std::int64_t peak_activation_bytes = 0;  // largest step of the epoch so far
  double learning_rate = 0.0;
  const EpochMetrics* metrics = nullptr;  // Kind::Epoch only; valid during the call
  // Kind::Epoch only, with a validation set: the baselines on the same windows.
  const BaselineScores* baselines = nullptr;
};

// Returns false to cancel: train() then throws CancelledError (see Trainer::train).
using ProgressCallback = std::function<bool(const TrainProgress&)>;

struct MemoryReport {
  std::string device;
  std::string checkpoint_summary;  // CheckpointConfig::summary()
  // The units that recompute in backward, by name, in the model's order (with a plan: the
  // units it checkpoints, wholly or in part).
  std::vector<std::string> checkpointed_units;
  // How checkpointed segments kept their inputs: "float32", "bfloat16" or "int8"
  // (checkpoint.boundary_dtype). The measured peaks below are with these boundaries.
  std::string boundary_dtype = "float32";
  std::size_t num_units = 0;
  // Measured activation peak of one training step (forward + backward) on the same batch.
  std::int64_t checkpointed_peak_bytes = 0;  // checkpointing as configured
  std::int64_t unchecked_peak_bytes = 0;     // checkpointing off
  double measured_savings = 0.0;             // 1 - checkpointed / unchecked
  // The seed's formulas (CheckpointConfig::memory_savings and compute_overhead of num_units),
  // which count units, not bytes: estimates beside the measured figures.
  double predicted_savings = 0.0;
  double predicted_compute_overhead = 1.0;
  // dynamic(n, fraction): the budget planner's measured plan, which the model runs.
  std::optional<CheckpointPlan> plan;
};

struct TrainReport {
  std::vector<EpochMetrics> history;  // every epoch, resumed ones included
  double initial_validation_loss = std::numeric_limits<double>::quiet_NaN();  // untrained model
  // NaN without a validation set.
  double best_validation_loss = std::numeric_limits<double>::quiet_NaN();
  // The epoch whose weights the model ends with: lowest validation loss (lowest training loss
  // without a validation set); 0: the initial weights.
  std::int64_t best_epoch = 0;
  double final_validation_loss = std::numeric_limits<double>::quiet_NaN();  // last epoch's
  std::int64_t epochs_run = 0;          // epochs completed, resumed ones included
  std::int64_t resumed_from_epoch = 0;  // epochs the snapshot held (0: a fresh run)
  // A refit (training.init_from): the saved model's folder and its SHA-256 (refit.h); empty for
  // a run from fresh weights.
  std::string init_from;
  std::string init_from_sha256;
  // Steps of epoch resumed_from_epoch + 1 the snapshot held (training.snapshot_every_steps).
  std::int64_t resumed_from_step = 0;
  // Quantization-aware training (training.qat): "off", or what was quantized and when, e.g.
  // "8-bit weights, 8-bit inputs, from epoch 1".
  std::string quantization = "off";
  // training.precision: "32", "bf16-mixed" or "16-mixed".
  std::string precision = "32";
  bool early_stopped = false;
  double train_seconds = 0.0;              // training steps only, over every epoch
  double samples_per_second = 0.0;         // training samples / train_seconds
  std::int64_t peak_activation_bytes = 0;  // largest training step, checkpointing as configured
  // Validation metrics of the model the run ends with (the best epoch's weights).
  ValidationMetrics validation;
  // data.target_normalizer.center and scope as resolved when the data loaded ("last",
  // "seasonal", "statistic"; "encoder", "series"), why (TimeSeriesDataset::target_center_reason),
  // and center seasonal's season in rows (0 otherwise).
  std::string target_center;
  std::string target_scope;
  std::string target_center_reason;
  // Whether the forecasts' median is a whole number (DataTransforms::whole_number_median).
  bool whole_number_median = false;
  // Intra-op threads at the end of the run, and why (ComputeThreads): "2 (auto: 2 of 2 CPUs
  // free ...)"; with auto, how often an epoch found another number of CPUs free.
  int threads = 0;
  std::string threads_reason;
  int thread_changes = 0;
  std::int64_t target_season = 0;
  // The naive and seasonal-naive forecasts on the same windows (train/baselines.h).
  BaselineScores baselines;
  // output.calibration: conformal with a validation set: the shifts and their cross-fitted
  // check (train/calibration.h); `validation` above is the model's own forecasts.
  std::optional<CalibrationResult> calibration;
  // baseline_warnings(validation, baselines): the model loses to a baseline.
  std::vector<std::string> warnings;
  // Measured at the end of the run on one training batch (Trainer::memory_report()).
  MemoryReport memory;
  std::string output_directory;  // where the run wrote its files
};

}  // namespace tft
