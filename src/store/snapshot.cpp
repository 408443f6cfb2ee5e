#include "store/snapshot.h"

#include <ATen/CPUGeneratorImpl.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/json_util.h"
#include "store/model_config_json.h"
#include "store/sealed_archive.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSnapshotFormat = "tftrain-snapshot";
// 2: sealed (a SHA-256 over the payload), and the state may hold an epoch in progress.
constexpr std::int64_t kSnapshotVersion = 2;

nlohmann::json epoch_in_progress_to_json(const EpochInProgress& e) {
  nlohmann::json j;
  j["steps_done"] = e.steps_done;
  j["loss_sum"] = e.loss_sum;
  j["samples"] = e.samples;
  j["peak_activation_bytes"] = e.peak_activation_bytes;
  j["seconds"] = e.seconds;
  j["allreduce_seconds"] = e.allreduce_seconds;
  return j;
}

EpochInProgress epoch_in_progress_from_json(const nlohmann::json& j, const std::string& where) {
  const std::string here = where + ": epoch_in_progress";
  EpochInProgress e;
  e.steps_done = json_get_int(j, "steps_done", here);
  e.loss_sum = json_get_number(j, "loss_sum", here);
  e.samples = json_get_int(j, "samples", here);
  e.peak_activation_bytes = json_get_int(j, "peak_activation_bytes", here);
  e.seconds = json_get_number(j, "seconds", here);
  e.allreduce_seconds = json_get_number(j, "allreduce_seconds", here);
  if (e.steps_done < 1 || e.samples < 0) {
    throw IoError(here + ": steps_done " + std::to_string(e.steps_done) + ", samples " +
                  std::to_string(e.samples) + " are not a started epoch");
  }
  return e;
}

nlohmann::json state_to_json(const SnapshotState& s, const ModelConfig& config) {
  nlohmann::json j;
  j["epochs_completed"] = s.epochs_completed;
  j["stopped_early"] = s.stopped_early;
  j["initial_validation_loss"] = json_number(s.initial_validation_loss);
  j["train_seconds"] = s.train_seconds;
  j["train_samples"] = s.train_samples;
  j["peak_activation_bytes"] = s.peak_activation_bytes;
  j["lr_schedule"] = LrSchedule::state_to_json(s.lr_schedule);
  j["early_stopping"] = EarlyStopping::state_to_json(s.early_stopping);
  nlohmann::json history = nlohmann::json::array();
  for (const EpochMetrics& m : s.history) {
    history.push_back(nlohmann::json::parse(epoch_metrics_to_json(m).dump()));
  }
  j["history"] = history;
  if (s.in_progress) j["epoch_in_progress"] = epoch_in_progress_to_json(*s.in_progress);
  if (s.loss_scaler) j["loss_scaler"] = loss_scaler_state_to_json(*s.loss_scaler);
  j["model_config"] = nlohmann::json::parse(model_config_to_json(config).dump());
  return j;
}

SnapshotState state_from_json(const nlohmann::json& j, const std::string& where) {
  SnapshotState s;
  s.epochs_completed = json_get_int(j, "epochs_completed", where);
  const nlohmann::json& stopped = json_get(j, "stopped_early", where);
  if (!stopped.is_boolean()) throw IoError(where + ": key 'stopped_early': expected a boolean");
  s.stopped_early = stopped.get<bool>();
  s.initial_validation_loss = json_get_number_or_nan(j, "initial_validation_loss", where);
  s.train_seconds = json_get_number(j, "train_seconds", where);
  s.train_samples = json_get_int(j, "train_samples", where);
  s.peak_activation_bytes = json_get_int(j, "peak_activation_bytes", where);
  s.lr_schedule = LrSchedule::state_from_json(json_get(j, "lr_schedule", where));
  s.early_stopping = EarlyStopping::state_from_json(json_get(j, "early_stopping", where));
  const nlohmann::json& history = json_get(j, "history", where);
  if (!history.is_array()) throw IoError(where + ": key 'history': expected an array");
  for (const nlohmann::json& m : history) s.history.push_back(epoch_metrics_from_json(m));
  if (j.contains("epoch_in_progress")) {
    s.in_progress = epoch_in_progress_from_json(j.at("epoch_in_progress"), where);
  }
  if (j.contains("loss_scaler")) {
    s.loss_scaler = loss_scaler_state_from_json(j.at("loss_scaler"), where);
  }
  return s;
}

}  // namespace

std::string snapshot_label(std::int64_t epochs_completed, std::int64_t steps_done) {
  if (steps_done == 0) return "of epoch " + std::to_string(epochs_completed);
  return "of epoch " + std::to_string(epochs_completed + 1) + ", step " +
         std::to_string(steps_done);
}

void save_snapshot(const fs::path& path, const SnapshotState& state, const TFTModel& model,
                   const ModuleState& best_model, const torch::optim::Optimizer& optimizer,
                   const RngState& rng) {
  ensure_directory(path.parent_path());
  torch::serialize::OutputArchive archive;
  archive.write("state", c10::IValue(state_to_json(state, model->config()).dump()));
  torch::serialize::OutputArchive weights, best, adam;
  write_module_state(weights, copy_module_state(*model));
  write_module_state(best, best_model);
  optimizer.save(adam);
  archive.write("model", weights);
  archive.write("best_model", best);
  archive.write("optimizer", adam);
  archive.write("rng_cpu", rng.cpu.cpu());
  if (rng.cuda.defined()) archive.write("rng_cuda", rng.cuda.cpu());
  save_sealed_archive(path, archive, kSnapshotFormat, kSnapshotVersion);
}

Snapshot load_snapshot(const fs::path& path, const TFTModel& model,
                       torch::optim::Optimizer& optimizer) {
  const std::string where = "snapshot '" + path.string() + "'";
  torch::serialize::InputArchive archive =
      load_sealed_archive(path, kSnapshotFormat, kSnapshotVersion, where);
  c10::IValue state_text;
  if (!archive.try_read("state", state_text) || !state_text.isString()) {
    throw IoError(where + ": no training state in it");
  }
  const nlohmann::json state_json = parse_json(state_text.toStringRef(), where);
  // The same model, or nothing.
  const nlohmann::json expected =
      nlohmann::json::parse(model_config_to_json(model->config()).dump());
  const nlohmann::json& stored = json_get(state_json, "model_config", where);
  if (stored != expected) {
    std::string differs;
    for (auto it = expected.begin(); it != expected.end() && differs.empty(); ++it) {
      if (!stored.contains(it.key()) || stored.at(it.key()) != it.value()) differs = it.key();
    }
    throw ConfigError(where + " was written for another model (model." +
                      (differs.empty() ? std::string("config") : differs) +
                      " differs from this config's); remove it or train without resuming");
  }

  Snapshot snapshot;
  snapshot.state = state_from_json(state_json, where);
  torch::serialize::InputArchive weights, best, adam;
  if (!archive.try_read("model", weights) || !archive.try_read("best_model", best) ||
      !archive.try_read("optimizer", adam)) {
    throw IoError(where + ": weights or optimizer state missing");
  }
  snapshot.model = read_module_state(weights, *model, where + " (model)");
  snapshot.best_model = read_module_state(best, *model, where + " (best_model)");
  if (!archive.try_read("rng_cpu", snapshot.rng.cpu)) {
    throw IoError(where + ": random generator state missing");
  }
  // Resuming puts this state into the trainer's generator, which rejects a damaged one with an
  // error of its own: try it on a scratch generator here, so a bad snapshot is this IoError.
  try {
    at::detail::createCPUGenerator().set_state(snapshot.rng.cpu);
  } catch (const c10::Error& e) {
    throw IoError(where + ": random generator state damaged: " + e.what_without_backtrace());
  }
  archive.try_read("rng_cuda", snapshot.rng.cuda);
  try {
    optimizer.load(adam);
  } catch (const c10::Error& e) {
    throw IoError(where +
                  ": optimizer state does not fit this model: " + e.what_without_backtrace());
  }
  return snapshot;
}

}  // namespace tft
