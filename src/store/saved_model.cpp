#include "store/saved_model.h"

#include <iterator>
#include <map>
#include <vector>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/json_util.h"
#include "common/sha256.h"
#include "config/train_config_io.h"
#include "store/model_config_json.h"
#include "store/module_state.h"
#include "store/sealed_archive.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWeights = "weights.pt";
constexpr const char* kModelConfig = "model_config.json";
constexpr const char* kTransforms = "transforms.json";
constexpr const char* kConfig = "config.yaml";
constexpr const char* kCalibration = "calibration.json";  // optional
constexpr const char* kChecksums = "SHA256SUMS";
constexpr const char* kFiles[] = {kWeights, kModelConfig, kTransforms, kConfig};

// SHA256SUMS in `sha256sum`'s format ("<64 hex>  <name>" per line), so `sha256sum -c SHA256SUMS`
// checks a folder by hand too.
std::string checksums_text(const std::map<std::string, std::string>& contents) {
  std::string text;
  for (const auto& [name, bytes] : contents) text += sha256_hex(bytes) + "  " + name + "\n";
  return text;
}

// The digests SHA256SUMS lists, by file name. IoError naming the file and line when a line is
// not "<64 hex digits> <space> <space or *> <name>".
std::map<std::string, std::string> parse_checksums(const std::string& text,
                                                   const std::string& where) {
  std::map<std::string, std::string> digests;
  std::size_t line_start = 0;
  for (int line = 1; line_start < text.size(); ++line) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string entry = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    const bool well_formed = entry.size() > 66 && entry[64] == ' ' &&
                             (entry[65] == ' ' || entry[65] == '*') &&
                             entry.find_first_not_of("0123456789abcdef") == 64;
    if (!well_formed) {
      throw IoError(where + ":" + std::to_string(line) +
                    ": expected '<SHA-256 in hex>  <file name>' (damaged?)");
    }
    digests[entry.substr(66)] = entry.substr(0, 64);
  }
  return digests;
}

}  // namespace

void save_model_directory(const fs::path& directory, const TFTModel& model,
                          const TrainConfig& config, const DataTransforms& transforms,
                          const QuantileCalibration& calibration) {
  ensure_directory(directory.parent_path());
  torch::serialize::OutputArchive archive;
  write_module_state(archive, copy_module_state(*model));
  std::map<std::string, std::string> contents;
  contents[kWeights] = archive_to_bytes(archive, "the weights of '" + directory.string() + "'");
  contents[kModelConfig] = model_config_to_json(model->config()).dump(2) + "\n";
  contents[kTransforms] = transforms.to_json().dump(2) + "\n";
  contents[kConfig] = train_config_to_yaml(config);
  if (!calibration.empty()) contents[kCalibration] = calibration.to_json().dump(2) + "\n";
  replace_directory_atomically(directory, [&](const fs::path& folder) {
    for (const auto& [name, bytes] : contents) write_file_atomically(folder / name, bytes);
    write_file_atomically(folder / kChecksums, checksums_text(contents));
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
  // Every file is checked against SHA256SUMS before anything is parsed: a damaged file is an
  // error naming it, never a silently different model.
  const fs::path checksums_path = directory / kChecksums;
  if (!fs::exists(checksums_path)) {
    throw IoError("saved model '" + directory.string() + "': " + kChecksums +
                  " is missing (a folder written by save_model_directory has one)");
  }
  const std::map<std::string, std::string> digests =
      parse_checksums(read_file(checksums_path), checksums_path.string());
  std::map<std::string, std::string> contents;
  std::vector<std::string> names(std::begin(kFiles), std::end(kFiles));
  // calibration.json is there when SHA256SUMS lists it (then it must be there, unchanged). A
  // name SHA256SUMS should not list, or a calibration.json it does not, is damage too: one
  // flipped bit in "calibration.json"'s line would otherwise drop the calibration silently.
  if (digests.count(kCalibration) > 0) names.push_back(kCalibration);
  for (const auto& [name, digest] : digests) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw IoError(checksums_path.string() + ": lists '" + name +
                    "', which a saved model does not have (damaged?)");
    }
  }
  if (digests.count(kCalibration) == 0 && fs::exists(directory / kCalibration)) {
    throw IoError(checksums_path.string() + ": lists no checksum for " + kCalibration +
                  ", which is in the folder (damaged?)");
  }
  for (const std::string& name : names) {
    const fs::path path = directory / name;
    const auto digest = digests.find(name);
    if (digest == digests.end()) {
      throw IoError(checksums_path.string() + ": lists no checksum for " + name);
    }
    std::string bytes = read_file(path);
    if (sha256_hex(bytes) != digest->second) {
      throw IoError("'" + path.string() + "' is damaged: its SHA-256 differs from the one in " +
                    kChecksums + " (the file was changed or corrupted after it was saved)");
    }
    contents[name] = std::move(bytes);
  }

  // The files passed their checksums, so a config error here means a folder written by
  // another version; the error names the file either way.
  const auto in_file = [&](const char* name, const auto& parse) {
    const std::string where = (directory / name).string();
    try {
      return parse(where);
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.what());
    } catch (const DataError& e) {
      throw IoError(where + ": " + e.what());
    }
  };
  TrainConfig config = in_file(
      kConfig, [&](const std::string&) { return load_train_config_string(contents[kConfig], ""); });
  ModelConfig model_config = in_file(kModelConfig, [&](const std::string& where) {
    return model_config_from_json(parse_json(contents[kModelConfig], where));
  });
  DataTransforms transforms = in_file(kTransforms, [&](const std::string& where) {
    return DataTransforms::from_json(parse_json(contents[kTransforms], where));
  });

  SavedModel saved(std::move(config), std::move(model_config), std::move(transforms));
  if (contents.count(kCalibration) > 0) {
    saved.calibration_ = in_file(kCalibration, [&](const std::string& where) {
      return QuantileCalibration::from_json(parse_json(contents[kCalibration], where), where);
    });
  }
  saved.model_ = TFTModel(saved.model_config_);
  // Forecasts run in the precision the model trained in; a saved model forecasts on the CPU,
  // where a 16-mixed model (trained on CUDA) runs in float32 instead.
  const Precision precision = saved.config_.training.precision;
  saved.model_->set_precision(precision == Precision::Fp16Mixed ? Precision::Float32 : precision);
  const std::string weights = (directory / kWeights).string();
  torch::serialize::InputArchive archive;
  load_archive_from_bytes(archive, contents[kWeights], "'" + weights + "'");
  load_module_state(*saved.model_, read_module_state(archive, *saved.model_, weights), weights);
  saved.model_->eval();
  return saved;
}

TimeSeriesDataset SavedModel::load_dataset(const std::string& path) const {
  TrainConfig c = config_;
  if (!path.empty()) {
    c.data.path = path;
    c.data.format = "auto";
  }
  return TimeSeriesDataset::load(c, transforms_);
}

Predictions SavedModel::predict(const TimeSeriesDataset& dataset) {
  return predict_forecasts(model_, dataset, config_.training.batch_size, c10::Device(c10::kCPU),
                           calibration_);
}

}  // namespace tft
