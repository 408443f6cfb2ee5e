#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <variant>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros_like.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include "common/compute_threads.h"
#include "common/error.h"
#include "common/format.h"
#include "data/batch.h"
#include "data/window_sampler.h"
#include "memory/memory_meter.h"
#include "model/fake_quantizer.h"
#include "model/quantile_loss.h"
#include "train/atomic_file.h"
#include "train/device.h"
#include "train/early_stopping.h"
#include "train/forecast_csv.h"
#include "train/checkpoint_planning.h"
#include "train/data_parallel.h"
#include "train/forecast_svg.h"
#include "train/fused_adam.h"
#include "train/gradient_buffers.h"
#include "train/gradient_clipping.h"
#include "train/lr_schedule.h"
#include "train/module_state.h"
#include "train/isolation.h"
#include "train/rng_state.h"
#include "train/saved_model.h"
#include "train/snapshot.h"
#include "train/summary.h"

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

}  // namespace

struct Trainer::State {
  TrainConfig config;
  TimeSeriesDataset dataset;
  ModelConfig model_config;
  c10::Device device{c10::kCPU};
  TFTModel model{nullptr};
  QuantileLoss loss{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::optional<WindowSampler> sampler;
  ModuleState initial_weights;
  RngState initial_rng;
  ModuleState best_weights;
  std::optional<CheckpointPlan> plan;  // dynamic checkpointing: what the model runs
  std::unique_ptr<DataParallel> parallel;  // this process's rank in a job (a group of one alone)
  Isolation isolation;  // this trainer's generators, recompute clock and memory account

  State(TrainConfig c, TimeSeriesDataset d)
      : config(std::move(c)),
        dataset(std::move(d)),
        isolation(config.training.seed) {}

  // This rank's share of each of the epoch's global batches (data_parallel.h).
  std::vector<RankBatch> epoch_batches(std::int64_t epoch) const {
    return parallel->rank_batches(sampler->epoch_batches(static_cast<std::uint64_t>(epoch)));
  }

  void new_optimizer() {
    optimizer = std::make_unique<FusedAdam>(
        model->parameters(), torch::optim::AdamOptions(config.training.learning_rate));
  }
};

namespace {

TrainConfig validated(TrainConfig config) {
  config.validate();
  set_compute_threads(static_cast<int>(config.training.threads));
  return config;
}

// "of epoch 2" after `epochs_completed` epochs, "of epoch 3, step 40" when `steps_done` steps
// of the next one were done too.
// Whether QAT's observers update in `epoch` (1-based): from start_epoch through
// freeze_observers_epoch (0: to the end).
bool qat_observes(const QatConfig& qat, std::int64_t epoch) {
  return qat.enabled && epoch >= qat.start_epoch &&
         (qat.freeze_observers_epoch == 0 || epoch <= qat.freeze_observers_epoch);
}

std::string snapshot_label(std::int64_t epochs_completed, std::int64_t steps_done) {
  if (steps_done == 0) return "of epoch " + std::to_string(epochs_completed);
  return "of epoch " + std::to_string(epochs_completed + 1) + ", step " +
         std::to_string(steps_done);
}

}  // namespace

Trainer::Trainer(TrainConfig config) : Trainer(validated(config), TimeSeriesDataset::load(config)) {}

Trainer::Trainer(TrainConfig config, TimeSeriesDataset dataset) {
  config = validated(std::move(config));
  if (dataset.encoder_length() != config.windows.encoder_length ||
      dataset.prediction_length() != config.windows.prediction_length) {
    throw ConfigError("trainer: the dataset was loaded with other windows (encoder " +
                      std::to_string(dataset.encoder_length()) + ", prediction " +
                      std::to_string(dataset.prediction_length()) + ") than the config's");
  }
  state_ = std::make_unique<State>(std::move(config), std::move(dataset));
  State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  s.parallel = std::make_unique<DataParallel>(
      s.config.training.distributed, resolve_device(s.config.training.device, "training.device"));
  s.device = s.parallel->device();
  if (s.config.training.snapshot_every_steps > 0 && s.parallel->world_size() > 1) {
    // A mid-epoch snapshot would need every rank's partial loss sums; rank 0 writes only its
    // own. Epoch snapshots hold the agreed sums and work in jobs.
    throw UnsupportedError(
        "training.snapshot_every_steps: snapshots inside an epoch are not supported in jobs of "
        "several ranks (this job has " + std::to_string(s.parallel->world_size()) +
        "); use 0 (a snapshot after every epoch)");
  }
  s.model_config = make_model_config(s.config, s.dataset.schema());

  s.model = TFTModel(s.model_config);  // initial weights from this trainer's generators
  const std::size_t units = s.model->units().size();
  if (const auto problem = s.config.checkpoint.find_problem(units)) {
    std::string names;
    for (const UnitInfo& u : s.model->units()) {
      names += (names.empty() ? "" : ", ") + std::to_string(u.index) + " " + u.name;
    }
    throw ConfigError(problem->message + " (the model's units: " + names + ")");
  }
  s.model->set_checkpointing(s.config.checkpoint);
  s.model->to(s.device);
  s.parallel->broadcast_module(*s.model);  // every rank starts from rank 0's weights
  s.loss = QuantileLoss(s.model_config.quantiles);
  s.loss->to(s.device);
  s.initial_weights = copy_module_state(*s.model);
  s.best_weights = s.initial_weights;
  s.initial_rng = RngState::capture(s.device);
  s.new_optimizer();
  // One global batch per step: batch_size windows for each rank (the shuffle depends on the
  // seed and the epoch only, so every rank cuts the same batches).
  s.sampler.emplace(s.dataset.training_windows(),
                    s.config.training.batch_size * s.parallel->world_size(), /*shuffle=*/true,
                    s.config.training.seed);
  if (std::holds_alternative<DynamicStrategy>(s.config.checkpoint.strategy)) {
    plan_dynamic_checkpointing();
  }
}

// dynamic(n, fraction): the planner measures the units on the first training batch and the
// model runs its choice (the seed's interval formula is only the prediction beside it).
void Trainer::plan_dynamic_checkpointing() {
  State& s = *state_;
  const std::vector<RankBatch> batches = s.epoch_batches(0);
  if (batches.empty()) return;
  const TrainingBatch batch = gather_batch(s.dataset, batches.front().windows).to(s.device);
  ensure_gradients(s.model->parameters());
  if (s.config.training.qat.enabled) {
    // Plan the model QAT trains, whose layers keep their fake-quantized inputs and masks too:
    // calibrate its quantizers on this batch. train() starts from the initial, uncalibrated
    // state (s.initial_weights holds the buffers) and the initial random state again.
    s.model->train();
    set_fake_quantizers_observing(*s.model, true);
    {
      const torch::NoGradGuard no_grad;
      s.model->forward(batch.inputs);
    }
    commit_fake_quantizer_observations(*s.model);
    set_fake_quantizers_observing(*s.model, false);
  }
  s.plan = plan_checkpointing(
      s.model,
      [&] { return s.loss->forward(s.model->forward(batch.inputs).prediction, batch.targets); },
      s.config.checkpoint, batch.targets.size(0), s.device);
  CheckpointConfig chosen = s.plan->config;
  ChunkLimits limits = s.plan->chunk_limits;
  if (s.parallel->world_size() > 1) {
    // Every rank runs rank 0's choice: per unit 0 (kept), -1 (every chunk recomputes) or the
    // number of its first chunks that recompute.
    const std::size_t units = s.model->units().size();
    const at::Tensor choice = at::zeros({static_cast<std::int64_t>(units)}, at::kLong);
    if (const auto* selective = std::get_if<SelectiveStrategy>(&chosen.strategy)) {
      for (const std::size_t unit : selective->layers) {
        const auto limit = limits.find(unit);
        choice[static_cast<std::int64_t>(unit)] = limit == limits.end() ? -1 : limit->second;
      }
    }
    s.parallel->broadcast({choice});
    std::vector<std::size_t> checkpointed;
    limits.clear();
    for (std::size_t unit = 0; unit < units; ++unit) {
      const std::int64_t value = choice[static_cast<std::int64_t>(unit)].item<std::int64_t>();
      if (value == 0) continue;
      checkpointed.push_back(unit);
      if (value > 0) limits[unit] = value;
    }
    const CheckpointConfig requested = s.config.checkpoint;
    chosen = checkpointed.empty() ? CheckpointConfig::none()
                                  : CheckpointConfig::selective(checkpointed);
    chosen.checkpoint_attention = requested.checkpoint_attention;
    chosen.checkpoint_ffn = requested.checkpoint_ffn;
    chosen.boundary_dtype = requested.boundary_dtype;
  }
  s.model->set_checkpointing(chosen);
  s.model->set_checkpointed_chunks(limits);
}

Trainer::~Trainer() = default;

const TrainConfig& Trainer::config() const { return state_->config; }
const TimeSeriesDataset& Trainer::dataset() const { return state_->dataset; }
const ModelConfig& Trainer::model_config() const { return state_->model_config; }
TFTModel& Trainer::model() { return state_->model; }

fs::path Trainer::output_directory() const { return fs::path(state_->config.output.directory); }
fs::path Trainer::snapshot_path() const { return output_directory() / "snapshots" / "last.pt"; }

void Trainer::cancel() noexcept { cancel_requested_.store(true); }

ValidationMetrics Trainer::evaluate() {
  State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  return s.parallel->evaluate(s.model, s.dataset, s.dataset.validation_windows(),
                              s.config.training.batch_size, s.device);
}

int Trainer::rank() const { return state_->parallel->rank(); }
int Trainer::world_size() const { return state_->parallel->world_size(); }

Predictions Trainer::predict() {
  State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  return predict_forecasts(s.model, s.dataset, s.config.training.batch_size, s.device);
}

void Trainer::save_model() const {
  const State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  save_model_directory(output_directory() / "model", s.model, s.config, s.dataset.transforms());
}

MemoryReport Trainer::memory_report() {
  State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  MemoryReport r;
  const std::size_t units = s.model->units().size();
  r.device = s.device.str();
  // The plan's, when planned (its chunk limits stay set on the model throughout).
  const CheckpointConfig effective = s.model->checkpointing();
  r.checkpoint_summary = s.config.checkpoint.summary();
  if (s.plan) r.checkpoint_summary += " -> " + s.plan->chosen();
  r.boundary_dtype = boundary_dtype_name(effective.boundary_dtype);
  const std::vector<UnitInfo> unit_infos = s.model->units();
  for (std::size_t i = 0; i < unit_infos.size(); ++i) {
    bool checkpointed = effective.should_checkpoint(i);
    if (s.plan) {
      checkpointed = false;
      for (const PlannedUnit& planned : s.plan->units) {
        if (planned.name == unit_infos[i].name) checkpointed = planned.checkpointed();
      }
    }
    if (checkpointed) r.checkpointed_units.push_back(unit_infos[i].name);
  }
  r.plan = s.plan;
  r.num_units = units;
  r.predicted_savings = s.config.checkpoint.memory_savings(units);
  r.predicted_compute_overhead = s.config.checkpoint.compute_overhead(units);
  const std::vector<RankBatch> batches = s.epoch_batches(0);
  if (batches.empty()) return r;
  const TrainingBatch batch = gather_batch(s.dataset, batches.front().windows).to(s.device);

  RngStateGuard restore_rng(s.device);  // training's random stream is left where it was
  const RngState start = RngState::capture(s.device);
  const bool was_training = s.model->is_training();
  const std::vector<at::Tensor> parameters = s.model->parameters();
  ensure_gradients(parameters);
  zero_gradients(parameters);
  memory::MemoryMeter meter(s.device);
  auto measure = [&](const CheckpointConfig& checkpointing) {
    s.model->set_checkpointing(checkpointing);
    s.model->train();
    start.restore();  // the same dropout masks for both measurements
    std::int64_t peak = 0;
    {
      memory::ActivationProbe probe(meter);
      const TFTOutput out = s.model->forward(batch.inputs);
      s.loss->forward(out.prediction, batch.targets).backward();
      peak = probe.activation_peak_bytes();
    }
    zero_gradients(parameters);
    return peak;
  };
  try {
    r.checkpointed_peak_bytes = measure(effective);
    r.unchecked_peak_bytes = measure(CheckpointConfig::none());
  } catch (...) {
    s.model->set_checkpointing(effective);
    s.model->train(was_training);
    zero_gradients(parameters);
    throw;
  }
  s.model->set_checkpointing(effective);
  s.model->train(was_training);
  r.measured_savings =
      r.unchecked_peak_bytes > 0
          ? 1.0 - static_cast<double>(r.checkpointed_peak_bytes) /
                      static_cast<double>(r.unchecked_peak_bytes)
          : 0.0;
  return r;
}

TrainReport Trainer::train(const ProgressCallback& progress, bool resume) {
  State& s = *state_;
  const Isolation::Scope isolated(s.isolation);
  const TrainingConfig& tc = s.config.training;
  const fs::path out = output_directory();
  ensure_directory(out);
  const bool has_validation = !s.dataset.validation_windows().empty();

  // A fresh start: initial weights, a new optimizer, the random state after initialisation.
  SnapshotState st;
  LrSchedule schedule(tc.lr_schedule, tc.learning_rate);
  EarlyStopping early(tc.early_stopping_patience);
  load_module_state(*s.model, s.initial_weights, "initial weights");
  s.new_optimizer();
  s.best_weights = s.initial_weights;
  s.initial_rng.restore();
  std::int64_t resumed_from = 0, resumed_steps = 0;
  // What the snapshot on disk holds, for messages ("of epoch 2", "of epoch 3, step 40");
  // empty while there is none.
  std::string last_snapshot;
  if (resume && fs::exists(snapshot_path())) {
    Snapshot snapshot = load_snapshot(snapshot_path(), s.model, *s.optimizer);
    load_module_state(*s.model, snapshot.model, "snapshot '" + snapshot_path().string() + "'");
    s.best_weights = std::move(snapshot.best_model);
    snapshot.rng.cuda_index = s.device.index();
    snapshot.rng.restore();
    st = std::move(snapshot.state);
    schedule.set_state(st.lr_schedule);
    early.set_state(st.early_stopping);
    resumed_from = st.epochs_completed;
    if (st.in_progress) resumed_steps = st.in_progress->steps_done;
    last_snapshot = snapshot_label(st.epochs_completed, resumed_steps);
  } else if (has_validation) {
    st.initial_validation_loss = evaluate().loss;
  }
  // Forecasts without a model, on the same windows: what the model has to beat.
  const BaselineScores baselines =
      has_validation ? score_baselines(s.dataset, s.dataset.validation_windows(),
                                       s.model->config().quantiles, s.config.model.seasonality)
                     : BaselineScores{};

  const std::vector<at::Tensor> parameters = s.model->parameters();
  // Gradients exist from the start (zeros), so no step's activation peak counts their
  // allocation and every step measures the same thing.
  ensure_gradients(parameters);
  const auto epochs = tc.epochs;

  // Stops with the best weights in the model; they go to model/ when an epoch finished.
  auto numerical_failure = [&](const std::string& what, double lr) {
    zero_gradients(parameters);
    load_module_state(*s.model, s.best_weights, "best weights");
    std::string kept;
    if (early.best_epoch() == 0) {
      kept = "the model keeps its initial weights (no epoch finished)";
    } else {
      kept = "the model keeps the weights of epoch " + std::to_string(early.best_epoch()) +
             " (loss " + loss_text(early.best()) + ")";
      if (s.parallel->writes_outputs()) {
        try {
          save_model();
          kept += ", saved to " + (out / "model").string();
        } catch (const Error& e) {
          kept += std::string(" (saving it failed: ") + e.what() + ")";
        }
      }
    }
    throw NumericalError(what + " (learning rate " + number_text(lr) +
                         "); training stopped, " + kept);
  };
  auto cancelled = [&](std::int64_t epoch, std::int64_t step, std::int64_t steps) {
    zero_gradients(parameters);
    load_module_state(*s.model, s.best_weights, "best weights");
    std::string where = "epoch " + std::to_string(epoch);
    if (step > 0) where += ", step " + std::to_string(step) + "/" + std::to_string(steps);
    const std::string kept =
        last_snapshot.empty() ? "; no snapshot was written"
                              : "; the snapshot " + last_snapshot + " is in " +
                                    snapshot_path().string() + " (resume continues)";
    throw CancelledError("training cancelled at " + where + kept);
  };

  // A stop asked for on this rank and not yet agreed with the others (jobs of several ranks).
  bool stop_wanted = false;
  {
    memory::MemoryMeter meter(s.device);
    for (std::int64_t epoch = st.epochs_completed + 1; epoch <= epochs && !st.stopped_early;
         ++epoch) {
      const double lr = schedule.learning_rate();
      set_learning_rate(*s.optimizer, lr);
      s.model->train();
      set_fake_quantizers_observing(*s.model, qat_observes(tc.qat, epoch));
      const std::vector<RankBatch> batches = s.epoch_batches(epoch - 1);
      const auto steps = static_cast<std::int64_t>(batches.size());
      // A snapshot taken inside this epoch: its steps are done and their sums carry on.
      const EpochInProgress resumed = st.in_progress.value_or(EpochInProgress{});
      st.in_progress.reset();
      const std::int64_t first_step = resumed.steps_done;
      if (first_step >= steps && first_step > 0) {
        throw ConfigError("snapshot '" + snapshot_path().string() + "' was taken after step " +
                          std::to_string(first_step) + " of epoch " + std::to_string(epoch) +
                          ", but this data and batch size give " + std::to_string(steps) +
                          " steps per epoch; resume with the data and training.batch_size of "
                          "that run, or train without resuming");
      }
      double loss_sum = resumed.loss_sum;
      std::int64_t samples = resumed.samples, peak = resumed.peak_activation_bytes;
      // Each step's loss and gradient norm stay on the device, and the host reads them back in
      // batches: on a GPU, at the epoch's end and, for a progress callback, at most ten times a
      // second (as often as the printer redraws); on the CPU, where reading costs nothing,
      // after every step. So the GPU never idles while the host looks at a number. Reading
      // checks them in step order, with the messages of a check right after each step; a NaN
      // found late has cost only the steps after it, as the best weights come back either way.
      const at::Tensor step_stats =
          at::empty({steps, 2}, at::TensorOptions().dtype(at::kDouble).device(s.device));
      // Per step, its windows (the steps before first_step are read already: their losses are
      // in loss_sum).
      std::vector<std::int64_t> step_samples(static_cast<std::size_t>(first_step), 0);
      std::int64_t steps_read = first_step, samples_read = samples;
      Clock::time_point last_read{};
      const auto read_steps = [&](std::int64_t end) {
        const at::Tensor host = step_stats.slice(0, steps_read, end).cpu();
        const auto rows = host.accessor<double, 2>();
        for (std::int64_t i = 0; i < end - steps_read; ++i) {
          const std::int64_t step = steps_read + i;
          const std::string where = " at epoch " + std::to_string(epoch) + ", step " +
                                    std::to_string(step + 1) + "/" + std::to_string(steps);
          const double loss_value = rows[i][0], norm = rows[i][1];
          if (!std::isfinite(loss_value)) {
            numerical_failure("training loss is " + loss_text(loss_value) + where, lr);
          }
          if (!std::isfinite(norm)) {
            numerical_failure("gradient norm is " + loss_text(norm) + where, lr);
          }
          const std::int64_t b = step_samples[static_cast<std::size_t>(step)];
          loss_sum += loss_value * static_cast<double>(b);
          samples_read += b;
        }
        steps_read = end;
        last_read = Clock::now();
      };
      const double reduce_seconds_before = s.parallel->reduce_seconds() - resumed.allreduce_seconds;
      const Clock::time_point start = Clock::now();
      const auto epoch_seconds = [&] { return resumed.seconds + seconds_since(start); };
      for (std::int64_t step = first_step; step < steps; ++step) {
        // In a job every rank stops at the same step: a rank that wants to stop says so here,
        // and all stop when any does (one small all-reduce per step).
        stop_wanted = cancel_requested_.exchange(false) || stop_wanted;
        if (s.parallel->world_size() > 1) stop_wanted = s.parallel->any(stop_wanted);
        if (stop_wanted) cancelled(epoch, step + 1, steps);
        const RankBatch& work = batches[static_cast<std::size_t>(step)];
        const TrainingBatch batch = gather_batch(s.dataset, work.windows).to(s.device);
        zero_gradients(parameters);
        if (tc.qat.enabled) discard_fake_quantizer_observations(*s.model);
        at::Tensor loss;
        {
          memory::ActivationProbe probe(meter);
          const TFTOutput output = s.model->forward(batch.inputs);
          loss = s.loss->forward(output.prediction, batch.targets);
          loss.backward();
          peak = std::max(peak, probe.activation_peak_bytes());
        }
        s.parallel->reduce_gradients(parameters, batch.targets.size(0), work.global_windows);
        // Once per step, after backward (recomputes included) has seen the step's scales; every
        // rank then takes rank 0's observers, as DDP's broadcast_buffers does.
        if (tc.qat.enabled) {
          commit_fake_quantizer_observations(*s.model);
          s.parallel->broadcast(fake_quantizer_buffers(*s.model));
        }
        const at::Tensor norm = clip_gradient_norm(parameters, tc.gradient_clip_norm);
        step_stats[step].copy_(at::stack({loss.detach().to(at::kDouble), norm.to(s.device)}));
        step_samples.push_back(batch.targets.size(0));
        samples += batch.targets.size(0);
        if (s.device.is_cpu() ||
            (progress && (steps_read == 0 || step + 1 == steps ||
                          Clock::now() - last_read >= std::chrono::milliseconds(100)))) {
          read_steps(step + 1);
        }
        s.optimizer->step();
        const std::int64_t run_step = (epoch - 1) * steps + step + 1;
        if (tc.snapshot_every_steps > 0 && run_step % tc.snapshot_every_steps == 0 &&
            step + 1 < steps && s.parallel->writes_outputs()) {
          read_steps(step + 1);
          EpochInProgress done;
          done.steps_done = step + 1;
          done.loss_sum = loss_sum;
          done.samples = samples;
          done.peak_activation_bytes = peak;
          done.seconds = epoch_seconds();
          done.allreduce_seconds = s.parallel->reduce_seconds() - reduce_seconds_before;
          st.in_progress = done;
          // Unchanged inside an epoch, but a run's first epoch has not stored them yet.
          st.lr_schedule = schedule.state();
          st.early_stopping = early.state();
          save_snapshot(snapshot_path(), st, s.model, s.best_weights, *s.optimizer,
                        RngState::capture(s.device));
          st.in_progress.reset();
          last_snapshot = snapshot_label(epoch - 1, step + 1);
        }
        if (progress) {
          const double elapsed = epoch_seconds();
          TrainProgress p;
          p.kind = TrainProgress::Kind::Step;
          p.epoch = epoch;
          p.epochs = epochs;
          p.step = step + 1;
          p.steps = steps;
          p.loss = loss_sum / static_cast<double>(samples_read);
          p.samples_per_second = elapsed > 0 ? static_cast<double>(samples) / elapsed : 0.0;
          p.peak_activation_bytes = peak;
          p.learning_rate = lr;
          if (!progress(p)) {
            if (s.parallel->world_size() == 1) cancelled(epoch, step + 1, steps);
            stop_wanted = true;  // agreed with the other ranks at the next step
          }
        }
      }
      read_steps(steps);
      const double seconds = epoch_seconds();

      // The epoch's loss and throughput over every rank's windows.
      const std::vector<double> totals = s.parallel->sum({loss_sum, static_cast<double>(samples)});
      loss_sum = totals[0];
      samples = static_cast<std::int64_t>(totals[1]);
      EpochMetrics m;
      m.epoch = epoch;
      m.train_loss = samples > 0 ? loss_sum / static_cast<double>(samples) : 0.0;
      m.learning_rate = lr;
      m.seconds = seconds;
      m.samples_per_second = seconds > 0 ? static_cast<double>(samples) / seconds : 0.0;
      m.peak_activation_bytes = peak;
      m.steps = steps;
      m.allreduce_seconds = s.parallel->reduce_seconds() - reduce_seconds_before;
      if (has_validation) m.validation = evaluate();
      const double monitored = has_validation ? m.validation.loss : m.train_loss;
      if (!std::isfinite(monitored)) {
        numerical_failure(std::string(has_validation ? "validation" : "training") +
                              " loss is " + loss_text(monitored) + " after epoch " +
                              std::to_string(epoch),
                          lr);
      }
      // With QAT the kept model is a quantized one: epochs before training.qat.start_epoch
      // (float) neither count as best nor for early stopping.
      m.best = (!tc.qat.enabled || epoch >= tc.qat.start_epoch) && early.update(epoch, monitored);
      if (m.best) s.best_weights = copy_module_state(*s.model);
      schedule.step(monitored);

      st.epochs_completed = epoch;
      st.stopped_early = early.should_stop();
      st.train_seconds += seconds;
      st.train_samples += samples;
      st.peak_activation_bytes = std::max(st.peak_activation_bytes, peak);
      st.lr_schedule = schedule.state();
      st.early_stopping = early.state();
      st.history.push_back(m);
      if (s.parallel->writes_outputs()) {
        save_snapshot(snapshot_path(), st, s.model, s.best_weights, *s.optimizer,
                      RngState::capture(s.device));
        std::string lines;
        for (const EpochMetrics& e : st.history) lines += epoch_metrics_to_json(e).dump() + "\n";
        write_file_atomically(out / "metrics.jsonl", lines);
      }
      // Rank 0 writes the job's one snapshot; every rank names it when cancelled.
      last_snapshot = snapshot_label(epoch, 0);

      if (progress) {
        TrainProgress p;
        p.kind = TrainProgress::Kind::Epoch;
        p.epoch = epoch;
        p.epochs = epochs;
        p.step = steps;
        p.steps = steps;
        p.loss = m.train_loss;
        p.samples_per_second = m.samples_per_second;
        p.peak_activation_bytes = peak;
        p.learning_rate = lr;
        p.metrics = &m;
        if (has_validation) p.baselines = &baselines;
        if (!progress(p)) {
          if (s.parallel->world_size() == 1) cancelled(epoch, 0, steps);
          stop_wanted = true;
        }
      }
    }
  }

  // The run's result: the best epoch's weights, and the files.
  set_fake_quantizers_observing(*s.model, false);
  zero_gradients(parameters);
  load_module_state(*s.model, s.best_weights, "best weights");
  TrainReport report;
  report.history = st.history;
  report.initial_validation_loss = st.initial_validation_loss;
  if (has_validation && early.best_epoch() > 0) report.best_validation_loss = early.best();
  report.best_epoch = early.best_epoch();
  if (tc.qat.enabled) {
    report.quantization = std::to_string(tc.qat.weight_bits) + "-bit weights, " +
                          std::to_string(tc.qat.activation_bits) + "-bit inputs, from epoch " +
                          std::to_string(tc.qat.start_epoch);
    if (tc.qat.freeze_observers_epoch > 0) {
      report.quantization +=
          ", observers frozen after epoch " + std::to_string(tc.qat.freeze_observers_epoch);
    }
  }
  if (has_validation && !st.history.empty()) {
    report.final_validation_loss = st.history.back().validation.loss;
  }
  report.epochs_run = st.epochs_completed;
  report.resumed_from_epoch = resumed_from;
  report.resumed_from_step = resumed_steps;
  report.early_stopped = st.stopped_early;
  report.train_seconds = st.train_seconds;
  report.samples_per_second =
      st.train_seconds > 0 ? static_cast<double>(st.train_samples) / st.train_seconds : 0.0;
  report.peak_activation_bytes = st.peak_activation_bytes;
  report.validation = evaluate();
  report.baselines = baselines;
  if (has_validation) report.warnings = baseline_warnings(report.validation, baselines);
  report.output_directory = out.string();
  if (!s.parallel->writes_outputs()) return report;  // rank 0 writes the run's files

  save_model();
  const Predictions predictions = predict();
  write_forecast_csv(out / "forecast.csv", s.dataset, predictions, s.config.data.group_columns);
  write_forecast_svg(out / "forecast.svg", s.dataset, predictions, s.config.data.target);
  write_file_atomically(out / "interpretation.json",
                        predictions.interpretation.to_json().dump(2) + "\n");
  report.memory = memory_report();
  write_file_atomically(out / "summary.json", summary_json(report).dump(2) + "\n");
  return report;
}

}  // namespace tft
