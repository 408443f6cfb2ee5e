// One Trainer::train() call, in named steps (internal to src/train): start from the initial
// state or resume a snapshot, run the epochs left (each a loop of steps), then keep the best
// weights and write the run's files. The trainer's contract (trainer.h) is this class's: the
// NaN/Inf guard, cancellation, snapshots and the output files.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "optim/early_stopping.h"
#include "optim/lr_schedule.h"
#include "report/baselines.h"
#include "report/train_report.h"
#include "store/snapshot.h"

namespace tft {

namespace memory {
class MemoryMeter;
}  // namespace memory

class Trainer;
struct TrainerState;

class TrainingRun {
 public:
  // `trainer` evaluates, predicts and saves; `state` is its state; `cancel_requested` is its
  // cancel() flag, consumed at each step.
  TrainingRun(Trainer& trainer, TrainerState& state, const ProgressCallback& progress,
              std::atomic<bool>& cancel_requested);

  // The whole run (Trainer::train). A failed allocation leaves as an OutOfMemoryError that
  // names the phase it happened in (where_): "training step 3 of 70 in epoch 2 (64 windows)".
  TrainReport run(bool resume);

 private:
  TrainReport run_phases(bool resume);
  struct Epoch;  // one epoch's batches and running sums (training_run.cpp)

  void start_from_initial_state();
  void resume_from_snapshot();
  void run_epoch(std::int64_t epoch, memory::MemoryMeter& meter);
  Epoch begin_epoch(std::int64_t epoch);
  void run_step(Epoch& epoch, std::int64_t step, memory::MemoryMeter& meter);
  bool step_stats_due(const Epoch& epoch, std::int64_t step) const;
  void read_step_stats(Epoch& epoch, std::int64_t end);
  void save_mid_epoch_snapshot(Epoch& epoch, std::int64_t steps_done);
  TrainProgress progress_of(const Epoch& epoch, TrainProgress::Kind kind) const;
  void report_step(const Epoch& epoch, std::int64_t step);
  EpochMetrics finish_epoch(Epoch& epoch);
  void monitor_epoch(EpochMetrics& metrics);
  void record_epoch(const EpochMetrics& metrics, const Epoch& epoch);
  void report_epoch(const EpochMetrics& metrics, const Epoch& epoch);
  bool stop_agreed();
  // After a progress callback returned false: stops at once alone, with the other ranks at
  // the next step in a job.
  void stop_after_callback(std::int64_t epoch, std::int64_t step, std::int64_t steps);
  TrainReport finish_run();
  TrainReport make_report();
  void write_outputs(TrainReport& report);

  // Both put the best weights so far into the model, then throw.
  [[noreturn]] void throw_numerical_error(const std::string& what, double learning_rate);
  [[noreturn]] void throw_cancelled(std::int64_t epoch, std::int64_t step, std::int64_t steps);
  void restore_best_weights();

  Trainer& trainer_;
  TrainerState& state_;
  const ProgressCallback& progress_;
  std::atomic<bool>& cancel_requested_;
  const bool has_validation_;
  SnapshotState saved_;  // what a snapshot of this run holds: finished epochs, sums, history
  LrSchedule schedule_;
  EarlyStopping early_stopping_;
  std::int64_t resumed_from_epoch_ = 0;
  std::int64_t resumed_from_step_ = 0;
  // What the snapshot on disk holds, for messages ("of epoch 2", "of epoch 3, step 40");
  // empty while there is none.
  std::string last_snapshot_;
  // Forecasts without a model, on the validation windows: what the model has to beat.
  BaselineScores baselines_;
  std::vector<at::Tensor> parameters_;
  // A stop asked for on this rank and not yet agreed with the others (jobs of several ranks).
  bool stop_wanted_ = false;
  // What the run is doing, for an out-of-memory message.
  std::string where_ = "starting";
};

}  // namespace tft
