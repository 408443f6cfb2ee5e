#include "train/trainer.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <ATen/ops/zeros.h>

#include "common/atomic_file.h"
#include "common/compute_threads.h"
#include "common/device.h"
#include "common/error.h"
#include "data/batch.h"
#include "memory/block_cache.h"
#include "memory/memory_meter.h"
#include "nn/fake_quantizer.h"
#include "optim/gradient_buffers.h"
#include "planning/budget_planning.h"
#include "planning/checkpoint_planning.h"
#include "readers/data_file.h"
#include "store/saved_model.h"
#include "train/center_selection.h"
#include "train/refit.h"
#include "train/trainer_state.h"
#include "train/training_run.h"

namespace tft {

namespace fs = std::filesystem;

// What a trainer starts from: its config, its data, and the saved model of a refit (or null).
struct TrainerStart {
  TrainConfig config;
  TimeSeriesDataset dataset;
  std::shared_ptr<const RefitSource> refit;
};

namespace {

TrainConfig validated(TrainConfig config) {
  config.validate();
  return config;
}

// The config, the data and, for a refit, the saved model: the saved model is opened and the
// config adopts its architecture before the data loads (with its transforms).
TrainerStart start_from(TrainConfig config, RowSource* source) {
  config = validated(std::move(config));
  std::shared_ptr<const RefitSource> refit;
  if (!config.training.init_from.empty()) {
    refit = std::make_shared<const RefitSource>(RefitSource::open(config));
    config = refit->adopt_architecture(std::move(config));
  }
  std::unique_ptr<RowSource> file;
  if (source == nullptr) {
    file = open_data_file(config.data);
    source = file.get();
  }
  TimeSeriesDataset dataset = refit != nullptr ? refit->load_data(*source, config)
                                               : TimeSeriesDataset::from_source(*source, config);
  return TrainerStart{std::move(config), std::move(dataset), std::move(refit)};
}

}  // namespace

Trainer::Trainer(TrainConfig config) : Trainer(start_from(std::move(config), nullptr)) {}

Trainer::Trainer(TrainConfig config, RowSource& source)
    : Trainer(start_from(std::move(config), &source)) {}

Trainer::Trainer(TrainConfig config, TimeSeriesDataset dataset)
    : Trainer(TrainerStart{std::move(config), std::move(dataset), nullptr}) {}

Trainer::Trainer(TrainerStart&& start) {
  TrainConfig config = validated(std::move(start.config));
  TimeSeriesDataset dataset = std::move(start.dataset);
  if (!config.training.init_from.empty() && start.refit == nullptr) {
    // A dataset loaded by the caller: it must carry the saved model's transforms.
    start.refit = std::make_shared<const RefitSource>(RefitSource::open(config));
    config = start.refit->adopt_architecture(std::move(config));
    start.refit->check_transforms(dataset.transforms());
  }
  if (dataset.encoder_length() != config.windows.encoder_length ||
      dataset.prediction_length() != config.windows.prediction_length) {
    throw ConfigError("trainer: the dataset was loaded with other windows (encoder " +
                      std::to_string(dataset.encoder_length()) + ", prediction " +
                      std::to_string(dataset.prediction_length()) + ") than the config's");
  }
  choose_target_center(config, dataset);  // center auto: pilot fits, before this trainer's model
  state_ = std::make_unique<TrainerState>(std::move(config), std::move(dataset));
  TrainerState& state = *state_;
  state.compute_threads = set_compute_threads(static_cast<int>(state.config.training.threads));
  const Isolation::Scope isolated(state.isolation);
  state.parallel = std::make_unique<DataParallel>(
      state.config.training.distributed,
      resolve_device(state.config.training.device, "training.device"));
  state.device = state.parallel->device();
  if (state.config.training.snapshot_every_steps > 0 && state.parallel->world_size() > 1) {
    // A mid-epoch snapshot would need every rank's partial loss sums; rank 0 writes only its
    // own. Epoch snapshots hold the agreed sums and work in jobs.
    throw UnsupportedError(
        "training.snapshot_every_steps: snapshots inside an epoch are not supported in jobs of "
        "several ranks (this job has " +
        std::to_string(state.parallel->world_size()) + "); use 0 (a snapshot after every epoch)");
  }
  state.model_config = start.refit != nullptr
                           ? start.refit->model_config(state.config, state.dataset.schema())
                           : make_model_config(state.config, state.dataset.schema());

  state.model = TFTModel(state.model_config);  // initial weights from this trainer's generators
  if (start.refit != nullptr) {
    start.refit->load_weights(state.model, state.model_config);  // or the saved model's
    state.init_from = start.refit->directory().string();
    state.init_from_sha256 = start.refit->sha256();
  }
  const std::size_t units = state.model->units().size();
  if (const auto problem = state.config.checkpoint.find_problem(units)) {
    std::string names;
    for (const UnitInfo& u : state.model->units()) {
      names += (names.empty() ? "" : ", ") + std::to_string(u.index) + " " + u.name;
    }
    throw ConfigError(problem->message + " (the model's units: " + names + ")");
  }
  state.model->set_checkpointing(state.config.checkpoint);
  state.model->set_precision(state.config.training.precision);
  state.model->to(state.device);
  state.parallel->broadcast_module(*state.model);  // every rank starts from rank 0's weights
  state.loss = QuantileLoss(state.model_config.quantiles);
  state.loss->to(state.device);
  state.initial_weights = copy_module_state(*state.model);
  state.best_weights = state.initial_weights;
  state.initial_rng = RngState::capture(state.device);
  state.new_optimizer();
  // One global batch per step: batch_size windows for each rank (the shuffle depends on the
  // seed and the epoch only, so every rank cuts the same batches).
  state.sampler.emplace(state.dataset.training_windows(),
                        state.config.training.batch_size * state.parallel->world_size(),
                        /*shuffle=*/true, state.config.training.seed);
  if (std::holds_alternative<DynamicStrategy>(state.config.checkpoint.strategy) ||
      state.config.checkpoint.memory_budget) {
    plan_checkpointing_on_first_batch();
  }
}

// dynamic(n, fraction) and memory_budget: the planner measures the units on the first training
// batch and the model runs its choice (for dynamic, the seed's interval formula is only the
// prediction beside it).
void Trainer::plan_checkpointing_on_first_batch() {
  TrainerState& state = *state_;
  const std::vector<RankBatch> batches = state.epoch_batches(0);
  if (batches.empty()) return;
  const TrainingBatch batch = gather_batch(state.dataset, batches.front().windows).to(state.device);
  const std::vector<at::Tensor> parameters = state.model->parameters();
  ensure_gradients(parameters);
  if (state.config.training.qat.enabled) {
    // Plan the model QAT trains, whose layers keep their fake-quantized inputs and masks too:
    // calibrate its quantizers on this batch. train() starts from the initial, uncalibrated
    // state (state.initial_weights holds the buffers) and the initial random state again.
    state.model->train();
    set_fake_quantizers_observing(*state.model, true);
    {
      const torch::NoGradGuard no_grad;
      state.model->forward(batch.inputs);
    }
    commit_fake_quantizer_observations(*state.model);
    set_fake_quantizers_observing(*state.model, false);
  }
  const std::int64_t rows = batch.targets.size(0);
  const PlanningStep step = [&](std::int64_t first_rows) {
    if (first_rows >= rows) {
      return state.loss->forward(state.model->forward(batch.inputs).prediction, batch.targets);
    }
    return state.loss->forward(
        state.model->forward(leading_rows(batch.inputs, first_rows)).prediction,
        batch.targets.slice(0, 0, first_rows));
  };
  const CheckpointConfig& requested = state.config.checkpoint;
  if (requested.memory_budget) {
    std::int64_t adam_state_bytes = 0;  // its two moments, allocated at the first step
    for (const at::Tensor& p : parameters) {
      adam_state_bytes += 2 * p.numel() * static_cast<std::int64_t>(p.element_size());
    }
    const BudgetRequest budget =
        resolve_budget(*requested.memory_budget, state.device, adam_state_bytes);
    state.plan = plan_for_budget(state.model, step, requested, budget, rows, state.device);
  } else {
    state.plan = plan_checkpointing(state.model, step, requested, rows, state.device);
  }
  CheckpointConfig chosen = state.plan->config;
  ChunkLimits limits = state.plan->chunk_limits;
  if (state.parallel->world_size() > 1) {
    // Every rank runs rank 0's choice: per unit 0 (kept), -1 (every chunk recomputes) or the
    // number of its first chunks that recompute; then the boundary dtype.
    const std::size_t units = state.model->units().size();
    const at::Tensor choice = at::zeros({static_cast<std::int64_t>(units) + 1}, at::kLong);
    if (const auto* selective = std::get_if<SelectiveStrategy>(&chosen.strategy)) {
      for (const std::size_t unit : selective->layers) {
        const auto limit = limits.find(unit);
        choice[static_cast<std::int64_t>(unit)] = limit == limits.end() ? -1 : limit->second;
      }
    }
    choice[static_cast<std::int64_t>(units)] = static_cast<std::int64_t>(chosen.boundary_dtype);
    state.parallel->broadcast({choice});
    std::vector<std::size_t> checkpointed;
    limits.clear();
    for (std::size_t unit = 0; unit < units; ++unit) {
      const std::int64_t value = choice[static_cast<std::int64_t>(unit)].item<std::int64_t>();
      if (value == 0) continue;
      checkpointed.push_back(unit);
      if (value > 0) limits[unit] = value;
    }
    chosen =
        checkpointed.empty() ? CheckpointConfig::none() : CheckpointConfig::selective(checkpointed);
    chosen.checkpoint_attention = requested.checkpoint_attention;
    chosen.checkpoint_ffn = requested.checkpoint_ffn;
    chosen.boundary_dtype =
        static_cast<BoundaryDtype>(choice[static_cast<std::int64_t>(units)].item<std::int64_t>());
  }
  state.model->set_checkpointing(chosen);
  state.model->set_checkpointed_chunks(limits);
}

Trainer::~Trainer() = default;

const TrainConfig& Trainer::config() const { return state_->config; }

const ComputeThreads& Trainer::compute_threads() const { return state_->compute_threads; }
const TimeSeriesDataset& Trainer::dataset() const { return state_->dataset; }
const ModelConfig& Trainer::model_config() const { return state_->model_config; }
TFTModel& Trainer::model() { return state_->model; }

void Trainer::write_no_files() { state_->writes_files = false; }

fs::path Trainer::output_directory() const { return fs::path(state_->config.output.directory); }
fs::path Trainer::snapshot_path() const { return output_directory() / "snapshots" / "last.pt"; }

void Trainer::cancel() noexcept { cancel_requested_.store(true); }

ValidationMetrics Trainer::evaluate() {
  TrainerState& state = *state_;
  const Isolation::Scope isolated(state.isolation);
  return state.parallel->evaluate(state.model, state.dataset, state.dataset.validation_windows(),
                                  state.config.training.batch_size, state.device);
}

int Trainer::rank() const { return state_->parallel->rank(); }
int Trainer::world_size() const { return state_->parallel->world_size(); }

Predictions Trainer::predict() { return predict(state_->dataset); }

Predictions Trainer::predict(const TimeSeriesDataset& dataset) {
  TrainerState& state = *state_;
  const Isolation::Scope isolated(state.isolation);
  return predict_forecasts(state.model, dataset, state.config.training.batch_size, state.device,
                           state.calibration);
}

std::optional<CalibrationResult> Trainer::calibrate() {
  TrainerState& state = *state_;
  const Isolation::Scope isolated(state.isolation);
  if (state.config.output.calibration != CalibrationMethod::Conformal ||
      state.dataset.validation_windows().empty()) {
    return std::nullopt;
  }
  CalibrationResult result =
      calibrate_conformal(state.model, state.dataset, state.dataset.validation_windows(),
                          state.config.training.batch_size, state.device);
  state.calibration = result.calibration;
  return result;
}

void Trainer::save_model(const fs::path& directory) const {
  const TrainerState& state = *state_;
  const Isolation::Scope isolated(state.isolation);
  save_model_directory(directory.empty() ? output_directory() / "model" : directory, state.model,
                       state.config, state.dataset.transforms(), state.calibration);
}

MemoryReport Trainer::memory_report() {
  TrainerState& state = *state_;
  const Isolation::Scope isolated(state.isolation);
  MemoryReport report;
  const std::size_t units = state.model->units().size();
  report.device = state.device.str();
  // The plan's, when planned (its chunk limits stay set on the model throughout).
  const CheckpointConfig effective = state.model->checkpointing();
  report.checkpoint_summary = state.config.checkpoint.summary();
  if (state.plan) report.checkpoint_summary += " -> " + state.plan->chosen();
  report.boundary_dtype = boundary_dtype_name(effective.boundary_dtype);
  const std::vector<UnitInfo> unit_infos = state.model->units();
  for (std::size_t i = 0; i < unit_infos.size(); ++i) {
    bool checkpointed = effective.should_checkpoint(i);
    if (state.plan) {
      checkpointed = false;
      for (const PlannedUnit& planned : state.plan->units) {
        if (planned.name == unit_infos[i].name) checkpointed = planned.checkpointed();
      }
    }
    if (checkpointed) report.checkpointed_units.push_back(unit_infos[i].name);
  }
  report.plan = state.plan;
  report.num_units = units;
  report.predicted_savings = state.config.checkpoint.memory_savings(units);
  report.predicted_compute_overhead = state.config.checkpoint.compute_overhead(units);
  const std::vector<RankBatch> batches = state.epoch_batches(0);
  if (batches.empty()) return report;
  const TrainingBatch batch = gather_batch(state.dataset, batches.front().windows).to(state.device);

  RngStateGuard restore_rng(state.device);  // training's random stream is left where it was
  const RngState start = RngState::capture(state.device);
  const bool was_training = state.model->is_training();
  const std::vector<at::Tensor> parameters = state.model->parameters();
  ensure_gradients(parameters);
  zero_gradients(parameters);
  memory::MemoryMeter meter(state.device);
  auto measure = [&](const CheckpointConfig& checkpointing) {
    state.model->set_checkpointing(checkpointing);
    state.model->train();
    start.restore();  // the same dropout masks for both measurements
    std::int64_t peak = 0;
    {
      memory::ActivationProbe probe(meter);
      // As a training step (training_run.cpp): only the prediction lives on into backward (a
      // temporary TFTOutput in the backward() statement would live until it returns).
      const at::Tensor loss =
          state.loss->forward(state.model->forward(batch.inputs).prediction, batch.targets);
      loss.backward();
      peak = probe.activation_peak_bytes();
    }
    zero_gradients(parameters);
    return peak;
  };
  try {
    report.checkpointed_peak_bytes = measure(effective);
    report.unchecked_peak_bytes = measure(CheckpointConfig::none());
  } catch (...) {
    state.model->set_checkpointing(effective);
    state.model->train(was_training);
    zero_gradients(parameters);
    throw;
  }
  state.model->set_checkpointing(effective);
  state.model->train(was_training);
  report.measured_savings = report.unchecked_peak_bytes > 0
                                ? 1.0 - static_cast<double>(report.checkpointed_peak_bytes) /
                                            static_cast<double>(report.unchecked_peak_bytes)
                                : 0.0;
  return report;
}

TrainReport Trainer::train(const ProgressCallback& progress, bool resume) {
  const Isolation::Scope isolated(state_->isolation);
  const memory::BlockCacheScope reuse_freed_blocks_while_training;
  if (state_->writes_files) ensure_directory(output_directory());
  return TrainingRun(*this, *state_, progress, cancel_requested_).run(resume);
}

}  // namespace tft
