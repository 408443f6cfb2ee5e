#include "train/snapshot.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "common/error.h"
#include "train/atomic_file.h"
#include "train/json_util.h"
#include "train/model_config_json.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "tftrain-snapshot";
constexpr std::int64_t kVersion = 1;

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
  return s;
}

}  // namespace

void save_snapshot(const fs::path& path, const SnapshotState& state, const TFTModel& model,
                   const ModuleState& best_model, const torch::optim::Optimizer& optimizer,
                   const RngState& rng) {
  ensure_directory(path.parent_path());
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kFormat)));
  archive.write("version", c10::IValue(kVersion));
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
  replace_file_atomically(path, [&](const std::string& temporary) {
    try {
      archive.save_to(temporary);
    } catch (const c10::Error& e) {
      throw IoError("cannot write snapshot '" + temporary + "': " + e.what_without_backtrace());
    }
  });
}

Snapshot load_snapshot(const fs::path& path, const TFTModel& model,
                       torch::optim::Optimizer& optimizer) {
  const std::string where = "snapshot '" + path.string() + "'";
  if (!fs::exists(path)) throw IoError(where + ": no such file");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path.string());
  } catch (const c10::Error& e) {
    throw IoError(where + ": cannot read: " + e.what_without_backtrace());
  }
  c10::IValue format, version, state_text;
  if (!archive.try_read("format", format) || !format.isString() ||
      format.toStringRef() != kFormat) {
    throw IoError(where + ": not a tftrain snapshot");
  }
  if (!archive.try_read("version", version) || !version.isInt() ||
      version.toInt() != kVersion) {
    throw IoError(where + ": unsupported snapshot version");
  }
  if (!archive.try_read("state", state_text) || !state_text.isString()) {
    throw IoError(where + ": no training state in it");
  }
  const nlohmann::json state_json = parse_json(state_text.toStringRef(), where);
  // The same model, or nothing.
  const nlohmann::json expected = nlohmann::json::parse(model_config_to_json(model->config()).dump());
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
  archive.try_read("rng_cuda", snapshot.rng.cuda);
  try {
    optimizer.load(adam);
  } catch (const c10::Error& e) {
    throw IoError(where + ": optimizer state does not fit this model: " +
                  e.what_without_backtrace());
  }
  return snapshot;
}

}  // namespace tft
