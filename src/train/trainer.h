// Training a Temporal Fusion Transformer from a TrainConfig: data, model, gradient
// checkpointing, Adam with global-norm clipping, reduce-on-plateau learning rate, early
// stopping, a NaN/Inf guard, snapshots to resume from, and the run's output files.
//
// Files written to config.output.directory:
//   metrics.jsonl        one JSON line per epoch (metrics.h), rewritten after each epoch
//   snapshots/last.pt    the run's state after the last finished epoch, or after the last
//                        training.snapshot_every_steps step (snapshot.h)
//   model/               the final model: the best epoch's weights (saved_model.h)
//   forecast.csv         validation windows and the window after the data (forecast_csv.h)
//   forecast.svg         forecast vs actual, up to four series (forecast_svg.h)
//   interpretation.json  variable importances and attention (interpretation.h)
//   interpretation.svg   a plot of the same (interpretation_svg.h)
//   summary.json         how the run ended (summary.h)
//
// Determinism: the trainer's own generators (isolation.h) are seeded with training.seed before
// the model is built, and the constructor sets the process-wide compute threads
// (common/compute_threads.h: training.threads intra-op threads, one BLAS thread; with 0, the
// CPUs free, asked again at every epoch). Epoch k's batches come from
// WindowSampler::epoch_batches(k) (seeded from (seed, k)). Every train(resume = false) starts
// from the same initial weights and random state, so two runs with the same config and thread
// count end with bitwise equal weights on the CPU (set training.threads where that must hold on a
// busy machine), and a run resumed from a snapshot ends exactly like one that never stopped.
//
// Data parallelism: started by a launcher as one of several ranks (torchrun's environment:
// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), the trainer joins the job (data_parallel.h):
// rank 0's initial weights everywhere, batch_size windows per rank per step, the whole global
// batch's gradient on every rank, validation shared out and summed, rank 0 alone writing.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>

#include "common/compute_threads.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "model/model_config.h"
#include "model/tft_model.h"
#include "readers/row_source.h"
#include "report/forecast.h"
#include "report/train_report.h"

namespace tft {

struct TrainerState;
struct TrainerStart;

class Trainer {
 public:
  // Validates the config, reads config.data.path (IoError / DataError), builds the model and
  // sets its checkpointing from config.checkpoint, validated against the model's unit count
  // (ConfigError naming the unit index). A dynamic strategy or a checkpoint.memory_budget is
  // planned here, measured on the first training batch (checkpoint_planning.h,
  // budget_planning.h); the model runs the plan. MemoryBudgetError when no plan fits the
  // budget (before anything is written). UnsupportedError for a device this build or machine
  // lacks.
  //
  // training.init_from (a refit, refit.h): the saved model is loaded and checked first
  // (IoError, or ConfigError naming the key that contradicts it); the data loads with its
  // transforms, and the model starts from its weights.
  explicit Trainer(TrainConfig config);
  // The same with the rows from `source` instead of config.data.path (an Arrow stream's).
  Trainer(TrainConfig config, RowSource& source);
  // The same with a dataset loaded by the caller (TimeSeriesDataset::from_reader, say); it
  // must have been loaded with `config`. For a refit, with the saved model's transforms
  // (ConfigError otherwise; RefitSource::check_transforms), which the two constructors above
  // do themselves.
  Trainer(TrainConfig config, TimeSeriesDataset dataset);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains up to config.training.epochs epochs (fewer when early stopping triggers), keeps
  // the best epoch's weights (lowest validation loss; training loss without a validation
  // set) in the model, and writes the output files.
  //
  // resume = false: a fresh run from the initial weights. resume = true: continues from
  // snapshots/last.pt when it exists (a fresh run when it does not); a snapshot that already
  // holds every epoch, or stopped early, only rewrites the outputs.
  //
  // `progress` is called after every step and after every epoch (train_report.h), on this
  // thread. It returning false, or cancel(), stops the run at the next step boundary with a
  // CancelledError: the last snapshot (of the last finished epoch, or of the last
  // snapshot_every_steps step) stays on disk (resume continues from it), the model holds the best
  // weights so far, model/ and the other outputs are not written.
  //
  // A file that cannot be written (a full disk, a read-only folder) is an IoError naming it;
  // what was on disk before stays (atomic_file.h).
  //
  // A NaN or infinite loss, gradient norm or validation loss stops the run with a
  // NumericalError naming the epoch, step and learning rate; the model gets the best weights
  // so far (the initial ones when no epoch finished), which are also written to model/.
  TrainReport train(const ProgressCallback& progress = nullptr, bool resume = false);

  // Loss, q-risk and MAE of the current weights on the validation windows (windows == 0 when
  // there is no validation set).
  ValidationMetrics evaluate();

  // Forecasts of the current weights for the validation windows and the windows after the
  // data, with the validation windows' interpretation (forecast.h).
  Predictions predict();
  // The same for another dataset, loaded with this trainer's config and transforms
  // (TimeSeriesDataset::from_source(source, config(), &dataset().transforms())).
  Predictions predict(const TimeSeriesDataset& dataset);

  // Asks a running train() to stop at the next step boundary (CancelledError). Safe from any
  // thread, a signal handler included (one atomic store). A request made while no training
  // runs is kept for the next train() and consumed by it.
  void cancel() noexcept;

  // Activation memory of one training step on the first training batch: measured with
  // checkpointing as configured and with it off, beside the CheckpointConfig's prediction.
  // Training is unaffected: the random generators' state is restored and the gradients are
  // zeroed afterwards.
  MemoryReport memory_report();

  // output.calibration: conformal with a validation set: fits the correction to the current
  // weights (train() does this at the end), which predict and save_model then apply; nothing
  // otherwise.
  std::optional<CalibrationResult> calibrate();

  // Writes model/ with the current weights and calibration (train() does this at the end);
  // into `directory` instead of the output directory's model/ when it is not empty.
  void save_model(const std::filesystem::path& directory = {}) const;

  // From now on train() writes no file: no snapshot, metrics.jsonl, model/ or forecasts (center
  // auto's pilot fits, train/center_selection.h). Internal to src/train.
  void write_no_files();

  const TrainConfig& config() const;
  // The intra-op threads this trainer set, and a warning when the configured number exceeds the
  // CPUs free (compute_threads.h).
  const ComputeThreads& compute_threads() const;
  const TimeSeriesDataset& dataset() const;
  const ModelConfig& model_config() const;
  // The model being trained. train(resume = false) resets its weights in place.
  TFTModel& model();
  std::filesystem::path output_directory() const;
  std::filesystem::path snapshot_path() const;

  // This process's rank and the number of ranks in its data-parallel job (0 and 1 without a
  // launcher; docs/distributed.md). Only rank 0 writes the output files.
  int rank() const;
  int world_size() const;

 private:
  explicit Trainer(TrainerStart&& start);
  void plan_checkpointing_on_first_batch();

  std::unique_ptr<TrainerState> state_;  // trainer_state.h
  std::atomic<bool> cancel_requested_{false};
};

}  // namespace tft
