// A trained model as a folder, everything needed to forecast new data the way the training
// data was seen:
//
//   model/
//     weights.pt          LibTorch archive: nested archives "parameters" and "buffers", each
//                         keyed by the module's tensor names (module_state.h)
//     model_config.json   the ModelConfig, input schema included (model_config_json.h)
//     transforms.json     the fitted scalers and categorical encoders (DataTransforms)
//     config.yaml         the training config (train_config_to_yaml)
//     calibration.json    output.calibration's shifts (train/calibration.h), applied by
//                         predict; only when the run fitted them
//     SHA256SUMS          the SHA-256 of each file above, in `sha256sum`'s format; loading
//                         checks every file against it first, so a damaged or edited file is
//                         an error naming it (LibTorch's archive reader checks no CRC)
//
// The folder is written as `model.tmp-<pid>` and then put in place of `model` (an existing one
// is replaced in one step where the system allows; see atomic_file.h). Loading it and
// predicting the same data gives bitwise the in-memory model's predictions (same device and
// thread count): the weights are stored exactly and prediction runs the same code
// (forecast.h) with the same batch size.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "model/model_config.h"
#include "model/tft_model.h"
#include "report/forecast.h"

namespace tft {

// Writes the model folder at `directory` (replacing an existing one). The weights are taken
// from `model` as they are now.
void save_model_directory(const std::filesystem::path& directory, const TFTModel& model,
                          const TrainConfig& config, const DataTransforms& transforms,
                          const QuantileCalibration& calibration = {});

class SavedModel {
 public:
  // Reads a folder written by save_model_directory (IoError when a file is missing,
  // unreadable or damaged, ConfigError when a config in it is invalid, OutOfMemoryError when the
  // machine has no memory to load it). The model runs on the CPU.
  static SavedModel load(const std::filesystem::path& directory);

  const TrainConfig& config() const { return config_; }
  const ModelConfig& model_config() const { return model_config_; }
  const DataTransforms& transforms() const { return transforms_; }
  const QuantileCalibration& calibration() const { return calibration_; }
  TFTModel& model() { return model_; }

  // Reads a file laid out like the training data with the stored transforms (nothing is
  // refitted): CSV or Parquet by its extension (data_file.h), whatever the training data was;
  // `path` empty: the training data's path and format from config.yaml.
  TimeSeriesDataset load_dataset(const std::string& path = "") const;

  // Forecasts for the dataset's validation windows and the windows after its data, with the
  // batch size of the training config (forecast.h) and the saved calibration.
  Predictions predict(const TimeSeriesDataset& dataset);

 private:
  SavedModel(TrainConfig config, ModelConfig model_config, DataTransforms transforms);

  TrainConfig config_;
  ModelConfig model_config_;
  DataTransforms transforms_;
  QuantileCalibration calibration_;
  TFTModel model_{nullptr};
};

}  // namespace tft
