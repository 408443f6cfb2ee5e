#include "train/training_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "common/torch_errors.h"
#include "data/batch.h"
#include "memory/memory_meter.h"
#include "nn/fake_quantizer.h"
#include "optim/gradient_buffers.h"
#include "optim/gradient_clipping.h"
#include "train/trainer.h"
#include "train/trainer_state.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

std::string number_text(double value) { return shortest_double(value); }

std::string loss_text(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

// Whether QAT's observers update in `epoch` (1-based): from start_epoch through
// freeze_observers_epoch (0: to the end).
bool qat_observes(const QatConfig& qat, std::int64_t epoch) {
  return qat.enabled && epoch >= qat.start_epoch &&
         (qat.freeze_observers_epoch == 0 || epoch <= qat.freeze_observers_epoch);
}

}  // namespace

// Each step's loss and gradient norm stay on the device, and the host reads them back in
// batches: on a GPU, at the epoch's end and, for a progress callback, at most ten times a
// second (as often as the printer redraws); on the CPU, where reading costs nothing, after
// every step. So the GPU never idles while the host looks at a number. Reading checks them in
// step order, with the messages of a check right after each step; a NaN found late has cost
// only the steps after it, as the best weights come back either way.
struct TrainingRun::Epoch {
  std::int64_t number = 0;  // 1-based
  std::int64_t steps = 0;
  double learning_rate = 0.0;
  std::vector<RankBatch> batches;
  // A snapshot taken inside this epoch: its steps are done and their sums carry on.
  EpochInProgress resumed;
  double loss_sum = 0.0;     // over the steps read (this rank's, until finish_epoch sums them)
  std::int64_t samples = 0;  // over the steps run
  std::int64_t peak_activation_bytes = 0;
  at::Tensor step_stats;  // per step: loss and gradient norm, as doubles on the device
  // Per step, its windows (the steps before the resumed ones are read already: their losses
  // are in loss_sum).
  std::vector<std::int64_t> step_samples;
  // Per step: whether the loss scaler skipped it (a non-finite norm there is no error).
  std::vector<bool> step_skipped;
  std::int64_t steps_read = 0;
  std::int64_t samples_read = 0;
  Clock::time_point last_read{};
  double reduce_seconds_before = 0.0;
  Clock::time_point start{};

  double seconds() const { return resumed.seconds + seconds_since(start); }
};

TrainingRun::TrainingRun(Trainer& trainer, TrainerState& state, const ProgressCallback& progress,
                         std::atomic<bool>& cancel_requested)
    : trainer_(trainer),
      state_(state),
      progress_(progress),
      cancel_requested_(cancel_requested),
      has_validation_(!state.dataset.validation_windows().empty()),
      schedule_(state.config.training.lr_schedule, state.config.training.learning_rate),
      early_stopping_(state.config.training.early_stopping_patience) {}

TrainReport TrainingRun::run(bool resume) {
  try {
    return run_phases(resume);
  } catch (const std::exception& error) {
    if (auto oom = out_of_memory_in(error, where_)) throw *oom;
    throw;
  }
}

TrainReport TrainingRun::run_phases(bool resume) {
  where_ = resume ? "restoring the run's state" : "restoring the initial weights";
  start_from_initial_state();
  if (resume && fs::exists(trainer_.snapshot_path())) {
    resume_from_snapshot();
  } else if (has_validation_) {
    where_ = "the untrained model's validation loss";
    saved_.initial_validation_loss = trainer_.evaluate().loss;
    if (!state_.init_from.empty() && std::isfinite(saved_.initial_validation_loss)) {
      // A refit starts from a trained model: its weights stay the best until an epoch beats
      // them on the validation windows (early stopping counts from them too), so a refit never
      // ends worse there than the model it started from.
      early_stopping_.set_state(EarlyStopping::State{saved_.initial_validation_loss, 0, 0});
    }
  }
  if (has_validation_) {
    where_ = "scoring the baselines";
    baselines_ = score_baselines(state_.dataset, state_.dataset.validation_windows(),
                                 state_.model->config().quantiles, state_.config.model.seasonality);
  }
  where_ = "allocating the gradients";
  parameters_ = state_.model->parameters();
  // Gradients exist from the start (zeros), so no step's activation peak counts their
  // allocation and every step measures the same thing.
  ensure_gradients(parameters_);
  {
    memory::MemoryMeter meter(state_.device);
    for (std::int64_t epoch = saved_.epochs_completed + 1;
         epoch <= state_.config.training.epochs && !saved_.stopped_early; ++epoch) {
      run_epoch(epoch, meter);
    }
  }
  return finish_run();
}

// A fresh start: initial weights, a new optimizer, the random state after initialisation.
void TrainingRun::start_from_initial_state() {
  load_module_state(*state_.model, state_.initial_weights, "initial weights");
  state_.new_optimizer();
  state_.best_weights = state_.initial_weights;
  state_.initial_rng.restore();
}

void TrainingRun::resume_from_snapshot() {
  const fs::path path = trainer_.snapshot_path();
  Snapshot snapshot = load_snapshot(path, state_.model, *state_.optimizer);
  load_module_state(*state_.model, snapshot.model, "snapshot '" + path.string() + "'");
  state_.best_weights = std::move(snapshot.best_model);
  snapshot.rng.cuda_index = state_.device.index();
  snapshot.rng.restore();
  saved_ = std::move(snapshot.state);
  schedule_.set_state(saved_.lr_schedule);
  early_stopping_.set_state(saved_.early_stopping);
  // A snapshot of a run in another precision has no scaler state: the scaler starts afresh.
  if (state_.loss_scaler && saved_.loss_scaler) state_.loss_scaler->set_state(*saved_.loss_scaler);
  resumed_from_epoch_ = saved_.epochs_completed;
  if (saved_.in_progress) resumed_from_step_ = saved_.in_progress->steps_done;
  last_snapshot_ = snapshot_label(saved_.epochs_completed, resumed_from_step_);
}

void TrainingRun::run_epoch(std::int64_t number, memory::MemoryMeter& meter) {
  Epoch epoch = begin_epoch(number);
  for (std::int64_t step = epoch.resumed.steps_done; step < epoch.steps; ++step) {
    where_ = "training step " + std::to_string(step + 1) + " of " + std::to_string(epoch.steps) +
             " in epoch " + std::to_string(number) + " (" +
             std::to_string(epoch.batches[static_cast<std::size_t>(step)].windows.size()) +
             " windows)";
    run_step(epoch, step, meter);
  }
  where_ = "the validation after epoch " + std::to_string(number);
  EpochMetrics metrics = finish_epoch(epoch);
  monitor_epoch(metrics);
  record_epoch(metrics, epoch);
  if (progress_) report_epoch(metrics, epoch);
}

TrainingRun::Epoch TrainingRun::begin_epoch(std::int64_t number) {
  Epoch epoch;
  epoch.number = number;
  epoch.learning_rate = schedule_.learning_rate();
  set_learning_rate(*state_.optimizer, epoch.learning_rate);
  state_.model->train();
  if (state_.compute_threads.configured == 0 && number > 1) {
    // Auto: as many threads as CPUs are free now; a neighbour may have come or gone.
    const ComputeThreads now = set_compute_threads(0);
    if (now.threads != state_.compute_threads.threads) ++state_.compute_thread_changes;
    state_.compute_threads = now;
  }
  set_fake_quantizers_observing(*state_.model, qat_observes(state_.config.training.qat, number));
  epoch.batches = state_.epoch_batches(number - 1);
  epoch.steps = static_cast<std::int64_t>(epoch.batches.size());
  epoch.resumed = saved_.in_progress.value_or(EpochInProgress{});
  saved_.in_progress.reset();
  const std::int64_t first_step = epoch.resumed.steps_done;
  if (first_step >= epoch.steps && first_step > 0) {
    throw ConfigError("snapshot '" + trainer_.snapshot_path().string() + "' was taken after step " +
                      std::to_string(first_step) + " of epoch " + std::to_string(number) +
                      ", but this data and batch size give " + std::to_string(epoch.steps) +
                      " steps per epoch; resume with the data and training.batch_size of "
                      "that run, or train without resuming");
  }
  epoch.loss_sum = epoch.resumed.loss_sum;
  epoch.samples = epoch.resumed.samples;
  epoch.peak_activation_bytes = epoch.resumed.peak_activation_bytes;
  epoch.step_stats =
      at::empty({epoch.steps, 2}, at::TensorOptions().dtype(at::kDouble).device(state_.device));
  epoch.step_samples.assign(static_cast<std::size_t>(first_step), 0);
  epoch.step_skipped.assign(static_cast<std::size_t>(first_step), false);
  epoch.steps_read = first_step;
  epoch.samples_read = epoch.samples;
  epoch.reduce_seconds_before = state_.parallel->reduce_seconds() - epoch.resumed.allreduce_seconds;
  epoch.start = Clock::now();
  return epoch;
}

void TrainingRun::run_step(Epoch& epoch, std::int64_t step, memory::MemoryMeter& meter) {
  const TrainingConfig& training = state_.config.training;
  if (stop_agreed()) throw_cancelled(epoch.number, step + 1, epoch.steps);
  const RankBatch& work = epoch.batches[static_cast<std::size_t>(step)];
  const TrainingBatch batch = gather_batch(state_.dataset, work.windows).to(state_.device);
  zero_gradients(parameters_);
  if (training.qat.enabled) discard_fake_quantizer_observations(*state_.model);
  at::Tensor loss;
  {
    memory::ActivationProbe probe(meter);
    // The forward's other outputs (interpretation) go before backward, as in the planners'
    // measured steps (planning_step.h), so a planned peak is the training step's.
    loss = state_.loss->forward(state_.model->forward(batch.inputs).prediction, batch.targets);
    (state_.loss_scaler ? state_.loss_scaler->scale(loss) : loss).backward();
    epoch.peak_activation_bytes =
        std::max(epoch.peak_activation_bytes, probe.activation_peak_bytes());
  }
  state_.parallel->reduce_gradients(parameters_, batch.targets.size(0), work.global_windows);
  // Once per step, after backward (recomputes included) has seen the step's scales; every
  // rank then takes rank 0's observers, as DDP's broadcast_buffers does.
  if (training.qat.enabled) {
    commit_fake_quantizer_observations(*state_.model);
    state_.parallel->broadcast(fake_quantizer_buffers(*state_.model));
  }
  // Loss scaling (16-mixed): the gradients are unscaled before clipping sees them, and a step
  // whose gradients overflowed float16 is skipped, as torch.amp.GradScaler does.
  if (state_.loss_scaler) state_.loss_scaler->unscale(parameters_);
  const at::Tensor norm = clip_gradient_norm(parameters_, training.gradient_clip_norm);
  const bool skipped = state_.loss_scaler && !state_.loss_scaler->step_allowed();
  epoch.step_stats[step].copy_(at::stack({loss.detach().to(at::kDouble), norm.to(state_.device)}));
  epoch.step_samples.push_back(batch.targets.size(0));
  epoch.step_skipped.push_back(skipped);
  epoch.samples += batch.targets.size(0);
  if (step_stats_due(epoch, step)) read_step_stats(epoch, step + 1);
  const std::int64_t run_step = (epoch.number - 1) * epoch.steps + step + 1;
  if (training.lr_warmup_steps > 0) {  // the epoch's rate times the warm-up's factor
    set_learning_rate(*state_.optimizer,
                      epoch.learning_rate * warmup_factor(training.lr_warmup_steps, run_step - 1));
  }
  if (!skipped) state_.optimizer->step();
  if (state_.loss_scaler) state_.loss_scaler->update();
  if (training.snapshot_every_steps > 0 && run_step % training.snapshot_every_steps == 0 &&
      step + 1 < epoch.steps && state_.writes_outputs()) {
    save_mid_epoch_snapshot(epoch, step + 1);
  }
  if (progress_) report_step(epoch, step);
}

// In a job every rank stops at the same step: a rank that wants to stop says so here, and all
// stop when any does (one small all-reduce per step).
bool TrainingRun::stop_agreed() {
  stop_wanted_ = cancel_requested_.exchange(false) || stop_wanted_;
  if (state_.parallel->world_size() > 1) stop_wanted_ = state_.parallel->any(stop_wanted_);
  return stop_wanted_;
}

bool TrainingRun::step_stats_due(const Epoch& epoch, std::int64_t step) const {
  return state_.device.is_cpu() ||
         (progress_ && (epoch.steps_read == 0 || step + 1 == epoch.steps ||
                        Clock::now() - epoch.last_read >= std::chrono::milliseconds(100)));
}

void TrainingRun::read_step_stats(Epoch& epoch, std::int64_t end) {
  const at::Tensor host = epoch.step_stats.slice(0, epoch.steps_read, end).cpu();
  const auto rows = host.accessor<double, 2>();
  for (std::int64_t i = 0; i < end - epoch.steps_read; ++i) {
    const std::int64_t step = epoch.steps_read + i;
    const std::string where = " at epoch " + std::to_string(epoch.number) + ", step " +
                              std::to_string(step + 1) + "/" + std::to_string(epoch.steps);
    const double loss_value = rows[i][0], norm = rows[i][1];
    if (!std::isfinite(loss_value)) {
      throw_numerical_error("training loss is " + loss_text(loss_value) + where,
                            epoch.learning_rate);
    }
    if (!std::isfinite(norm) && !epoch.step_skipped[static_cast<std::size_t>(step)]) {
      throw_numerical_error("gradient norm is " + loss_text(norm) + where, epoch.learning_rate);
    }
    const std::int64_t windows = epoch.step_samples[static_cast<std::size_t>(step)];
    epoch.loss_sum += loss_value * static_cast<double>(windows);
    epoch.samples_read += windows;
  }
  epoch.steps_read = end;
  epoch.last_read = Clock::now();
}

void TrainingRun::save_mid_epoch_snapshot(Epoch& epoch, std::int64_t steps_done) {
  read_step_stats(epoch, steps_done);
  EpochInProgress done;
  done.steps_done = steps_done;
  done.loss_sum = epoch.loss_sum;
  done.samples = epoch.samples;
  done.peak_activation_bytes = epoch.peak_activation_bytes;
  done.seconds = epoch.seconds();
  done.allreduce_seconds = state_.parallel->reduce_seconds() - epoch.reduce_seconds_before;
  saved_.in_progress = done;
  // Unchanged inside an epoch, but a run's first epoch has not stored them yet.
  saved_.lr_schedule = schedule_.state();
  saved_.early_stopping = early_stopping_.state();
  saved_.loss_scaler = state_.loss_scaler_state();
  save_snapshot(trainer_.snapshot_path(), saved_, state_.model, state_.best_weights,
                *state_.optimizer, RngState::capture(state_.device));
  saved_.in_progress.reset();
  last_snapshot_ = snapshot_label(epoch.number - 1, steps_done);
}

// The fields a step's and an epoch's progress share.
TrainProgress TrainingRun::progress_of(const Epoch& epoch, TrainProgress::Kind kind) const {
  TrainProgress p;
  p.kind = kind;
  p.epoch = epoch.number;
  p.epochs = state_.config.training.epochs;
  p.steps = epoch.steps;
  p.peak_activation_bytes = epoch.peak_activation_bytes;
  p.learning_rate = epoch.learning_rate;
  return p;
}

void TrainingRun::report_step(const Epoch& epoch, std::int64_t step) {
  const double elapsed = epoch.seconds();
  TrainProgress p = progress_of(epoch, TrainProgress::Kind::Step);
  p.step = step + 1;
  p.loss = epoch.loss_sum / static_cast<double>(epoch.samples_read);
  p.samples_per_second = elapsed > 0 ? static_cast<double>(epoch.samples) / elapsed : 0.0;
  if (!progress_(p)) stop_after_callback(epoch.number, step + 1, epoch.steps);
}

void TrainingRun::stop_after_callback(std::int64_t epoch, std::int64_t step, std::int64_t steps) {
  if (state_.parallel->world_size() == 1) throw_cancelled(epoch, step, steps);
  stop_wanted_ = true;  // agreed with the other ranks at the next step
}

// The epoch's loss and throughput over every rank's windows, and its validation.
EpochMetrics TrainingRun::finish_epoch(Epoch& epoch) {
  read_step_stats(epoch, epoch.steps);
  const double seconds = epoch.seconds();
  const std::vector<double> totals =
      state_.parallel->sum({epoch.loss_sum, static_cast<double>(epoch.samples)});
  epoch.loss_sum = totals[0];
  epoch.samples = static_cast<std::int64_t>(totals[1]);
  EpochMetrics m;
  m.epoch = epoch.number;
  m.train_loss = epoch.samples > 0 ? epoch.loss_sum / static_cast<double>(epoch.samples) : 0.0;
  m.learning_rate = epoch.learning_rate;
  m.seconds = seconds;
  m.samples_per_second = seconds > 0 ? static_cast<double>(epoch.samples) / seconds : 0.0;
  m.peak_activation_bytes = epoch.peak_activation_bytes;
  m.steps = epoch.steps;
  m.allreduce_seconds = state_.parallel->reduce_seconds() - epoch.reduce_seconds_before;
  if (has_validation_) m.validation = trainer_.evaluate();
  return m;
}

// The monitored loss (validation, else training) must be finite; it decides the best epoch,
// early stopping and the learning rate.
void TrainingRun::monitor_epoch(EpochMetrics& metrics) {
  const QatConfig& qat = state_.config.training.qat;
  const double monitored = has_validation_ ? metrics.validation.loss : metrics.train_loss;
  if (!std::isfinite(monitored)) {
    throw_numerical_error(std::string(has_validation_ ? "validation" : "training") + " loss is " +
                              loss_text(monitored) + " after epoch " +
                              std::to_string(metrics.epoch),
                          metrics.learning_rate);
  }
  // With QAT the kept model is a quantized one: epochs before training.qat.start_epoch
  // (float) neither count as best nor for early stopping.
  metrics.best = (!qat.enabled || metrics.epoch >= qat.start_epoch) &&
                 early_stopping_.update(metrics.epoch, monitored);
  if (metrics.best) state_.best_weights = copy_module_state(*state_.model);
  schedule_.step(monitored);
}

// Into the run's state, the snapshot and metrics.jsonl.
void TrainingRun::record_epoch(const EpochMetrics& metrics, const Epoch& epoch) {
  saved_.epochs_completed = epoch.number;
  saved_.stopped_early = early_stopping_.should_stop();
  saved_.train_seconds += metrics.seconds;
  saved_.train_samples += epoch.samples;
  saved_.peak_activation_bytes =
      std::max(saved_.peak_activation_bytes, epoch.peak_activation_bytes);
  saved_.lr_schedule = schedule_.state();
  saved_.early_stopping = early_stopping_.state();
  saved_.history.push_back(metrics);
  saved_.loss_scaler = state_.loss_scaler_state();
  if (state_.writes_outputs()) {
    save_snapshot(trainer_.snapshot_path(), saved_, state_.model, state_.best_weights,
                  *state_.optimizer, RngState::capture(state_.device));
    std::string lines;
    for (const EpochMetrics& e : saved_.history) lines += epoch_metrics_to_json(e).dump() + "\n";
    write_file_atomically(trainer_.output_directory() / "metrics.jsonl", lines);
  }
  // Rank 0 writes the job's one snapshot; every rank names it when cancelled.
  last_snapshot_ = snapshot_label(epoch.number, 0);
}

void TrainingRun::report_epoch(const EpochMetrics& metrics, const Epoch& epoch) {
  TrainProgress p = progress_of(epoch, TrainProgress::Kind::Epoch);
  p.step = epoch.steps;
  p.loss = metrics.train_loss;
  p.samples_per_second = metrics.samples_per_second;
  p.metrics = &metrics;
  if (has_validation_) p.baselines = &baselines_;
  if (!progress_(p)) stop_after_callback(epoch.number, 0, epoch.steps);
}

// The run's result: the best epoch's weights, and the files (rank 0 writes them).
TrainReport TrainingRun::finish_run() {
  where_ = "the final model's metrics, calibration and files";
  set_fake_quantizers_observing(*state_.model, false);
  restore_best_weights();
  TrainReport report = make_report();
  report.calibration = trainer_.calibrate();
  if (state_.writes_outputs()) write_outputs(report);
  return report;
}

void TrainingRun::restore_best_weights() {
  zero_gradients(parameters_);
  load_module_state(*state_.model, state_.best_weights, "best weights");
}

// Stops with the best weights in the model; they go to model/ when an epoch finished.
void TrainingRun::throw_numerical_error(const std::string& what, double learning_rate) {
  restore_best_weights();
  std::string kept;
  if (early_stopping_.best_epoch() == 0) {
    kept = state_.init_from.empty()
               ? "the model keeps its initial weights (no epoch finished)"
               : "the model keeps the weights it started from (" + state_.init_from + ")";
  } else {
    kept = "the model keeps the weights of epoch " + std::to_string(early_stopping_.best_epoch()) +
           " (loss " + loss_text(early_stopping_.best()) + ")";
    if (state_.writes_outputs()) {
      try {
        trainer_.save_model();
        kept += ", saved to " + (trainer_.output_directory() / "model").string();
      } catch (const Error& e) {
        kept += std::string(" (saving it failed: ") + e.what() + ")";
      }
    }
  }
  throw NumericalError(what + " (learning rate " + number_text(learning_rate) +
                       "); training stopped, " + kept);
}

void TrainingRun::throw_cancelled(std::int64_t epoch, std::int64_t step, std::int64_t steps) {
  restore_best_weights();
  std::string where = "epoch " + std::to_string(epoch);
  if (step > 0) where += ", step " + std::to_string(step) + "/" + std::to_string(steps);
  const std::string kept = last_snapshot_.empty()
                               ? "; no snapshot was written"
                               : "; the snapshot " + last_snapshot_ + " is in " +
                                     trainer_.snapshot_path().string() + " (resume continues)";
  throw CancelledError("training cancelled at " + where + kept);
}

}  // namespace tft
