#include "train/saved_model.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "common/error.h"
#include "config/train_config_io.h"
#include "train/atomic_file.h"
#include "train/json_util.h"
#include "train/model_config_json.h"
#include "train/module_state.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWeights = "weights.pt";
constexpr const char* kModelConfig = "model_config.json";
constexpr const char* kTransforms = "transforms.json";
constexpr const char* kConfig = "config.yaml";

void write_text(const fs::path& path, const std::string& text) {
  write_file_atomically(path, text);
}

}  // namespace

void save_model_directory(const fs::path& directory, const TFTModel& model,
                          const TrainConfig& config, const DataTransforms& transforms) {
  ensure_directory(directory.parent_path());
  const ModuleState state = copy_module_state(*model);
  replace_directory_atomically(directory, [&](const fs::path& folder) {
    torch::serialize::OutputArchive archive;
    write_module_state(archive, state);
    try {
      archive.save_to((folder / kWeights).string());
    } catch (const c10::Error& e) {
      throw IoError("cannot write '" + (folder / kWeights).string() + "': " + e.what_without_backtrace());
    }
    write_text(folder / kModelConfig, model_config_to_json(model->config()).dump(2) + "\n");
    write_text(folder / kTransforms, transforms.to_json().dump(2) + "\n");
    write_text(folder / kConfig, train_config_to_yaml(config));
  });
}

SavedModel::SavedModel(TrainConfig config, ModelConfig model_config, DataTransforms transforms)
    : config_(std::move(config)),
      model_config_(std::move(model_config)),
      transforms_(std::move(transforms)) {}

SavedModel SavedModel::load(const fs::path& directory) {
  if (!fs::is_directory(directory)) {
    throw IoError("saved model '" + directory.string() + "': not a folder");
  }
  const fs::path config_path = directory / kConfig;
  TrainConfig config = load_train_config_string(read_file(config_path), "");
  const std::string model_config_where = (directory / kModelConfig).string();
  ModelConfig model_config = model_config_from_json(
      parse_json(read_file(directory / kModelConfig), model_config_where));
  const std::string transforms_where = (directory / kTransforms).string();
  DataTransforms transforms;
  try {
    transforms = DataTransforms::from_json(
        parse_json(read_file(directory / kTransforms), transforms_where));
  } catch (const DataError& e) {
    throw IoError(transforms_where + ": " + e.what());
  }

  SavedModel saved(std::move(config), std::move(model_config), std::move(transforms));
  saved.model_ = TFTModel(saved.model_config_);
  const std::string weights = (directory / kWeights).string();
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(weights);
  } catch (const c10::Error& e) {
    throw IoError("cannot read '" + weights + "': " + e.what_without_backtrace());
  }
  load_module_state(*saved.model_, read_module_state(archive, *saved.model_, weights), weights);
  saved.model_->eval();
  return saved;
}

TimeSeriesDataset SavedModel::load_dataset(const std::string& csv_path) const {
  TrainConfig c = config_;
  if (!csv_path.empty()) c.data.path = csv_path;
  return TimeSeriesDataset::load(c, transforms_);
}

Predictions SavedModel::predict(const TimeSeriesDataset& dataset) {
  return predict_forecasts(model_, dataset, config_.training.batch_size, c10::Device(c10::kCPU));
}

}  // namespace tft
