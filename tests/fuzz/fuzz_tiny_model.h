// What the LibTorch targets (saved model, snapshot) start from: a real model small enough to
// load in milliseconds (hidden size 4, two series of 8 steps), built in memory once per
// process; a scratch folder for the files they load; and TFT_FUZZ_WRITE_SEEDS, which makes
// them write their seed inputs (the real files, before fuzzing) into a folder, so the seed
// corpora in corpus/ can be regenerated when a file format changes (the optimizer state in a
// snapshot is keyed by parameter addresses, so its bytes differ from run to run).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include <torch/utils.h>

#include "config/train_config.h"
#include "config/train_config_io.h"
#include "data/time_series_dataset.h"
#include "model/model_config.h"
#include "model/tft_model.h"
#include "readers/csv_reader.h"

namespace tft::fuzz {

// Two series, integer time, a known real and the series as a static categorical.
constexpr const char* kTinyCsv =
    "g,t,x,y\n"
    "a,0,0.1,1.0\na,1,0.2,1.5\na,2,0.3,1.2\na,3,0.4,1.7\n"
    "a,4,0.5,1.1\na,5,0.6,1.9\na,6,0.7,1.4\na,7,0.8,1.6\n"
    "b,0,1.1,5.0\nb,1,1.2,5.5\nb,2,1.3,5.2\nb,3,1.4,5.7\n"
    "b,4,1.5,5.1\nb,5,1.6,5.9\nb,6,1.7,5.4\nb,7,1.8,5.6\n";

struct TinyModel {
  TrainConfig config;
  DataTransforms transforms;
  TFTModel model{nullptr};
};

constexpr const char* kTinyConfigYaml = R"(
data:
  path: tiny.csv
  time_column: t
  group_columns: [g]
  target: y
  static_categoricals: [g]
  known_reals: [x]
windows: {encoder_length: 3, prediction_length: 2}
split: {validation_steps: 2}
model: {hidden_size: 4, attention_heads: 1, quantiles: [0.1, 0.5, 0.9]}
training: {batch_size: 4}
)";

inline TrainConfig tiny_config() { return load_train_config_string(kTinyConfigYaml); }

// The tiny CSV loaded with `config` (and `fitted` transforms when given).
inline TimeSeriesDataset tiny_dataset(const TrainConfig& config,
                                      const DataTransforms* fitted = nullptr) {
  return TimeSeriesDataset::from_reader(CsvReader(config.data.path, kTinyCsv), config, fitted);
}

inline TinyModel make_tiny_model() {
  TinyModel tiny;
  tiny.config = tiny_config();
  const TimeSeriesDataset dataset = tiny_dataset(tiny.config);
  tiny.transforms = dataset.transforms();
  torch::manual_seed(1);  // the same weights on every run
  tiny.model = TFTModel(make_model_config(tiny.config, dataset.schema()));
  return tiny;
}

// A fresh folder for this process's files (call once per process); removed at exit, but a
// crash leaves it for a look.
inline std::filesystem::path scratch_folder(const std::string& target) {
  static std::filesystem::path folder;
  folder = std::filesystem::temp_directory_path() / (target + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  });
  return folder;
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes seed `name` into the folder TFT_FUZZ_WRITE_SEEDS names, if it is set.
inline void offer_seed(const std::string& name, const std::string& bytes) {
  const char* folder = std::getenv("TFT_FUZZ_WRITE_SEEDS");
  if (folder == nullptr || *folder == '\0') return;
  std::filesystem::create_directories(folder);
  write_bytes(std::filesystem::path(folder) / name, bytes);
}

}  // namespace tft::fuzz
