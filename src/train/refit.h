// Starting a run from a saved model: a refit (training.init_from; docs/refit.md).
//
// What the run takes from the saved model:
//   - its architecture, data schema and target normaliser (kSavedKeys in refit.cpp): a key the
//     config left out takes the saved value; one given with another value is a ConfigError
//     naming it. A value that asks for a choice (center or scope auto, model.seasonality 0)
//     takes the saved model's choice. Dropout, the schedule and everything else of `training`
//     are the config's: they shape no weight;
//   - its fitted transforms: the data loads with them (TimeSeriesDataset::from_source), used as
//     training.init_scalers and training.init_categories say;
//   - its weights, as the initial weights (train(resume = false) starts from them). Embedding
//     tables grown for new categories start their new rows as copies of the unknown bucket's
//     row, so the refit's first forecasts are the saved model's.
// The optimizer starts fresh: a saved model holds the best epoch's weights and no optimizer
// state (Adam's moments belong to the last epoch, not to the best one), and the new data gives
// other gradients anyway. A refit's own snapshots resume it like any run.
//
// The folder is only read: an output.directory that is the folder, lies inside it or holds it is
// a ConfigError before anything is written.
#pragma once

#include <filesystem>
#include <string>

#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "model/model_config.h"
#include "model/tft_model.h"
#include "readers/row_source.h"
#include "store/module_state.h"
#include "store/saved_model.h"

namespace tft {

class RefitSource {
 public:
  // Loads config.training.init_from (SavedModel::load's IoError or ConfigError, naming the
  // file), and checks config.output.directory against it.
  static RefitSource open(const TrainConfig& config);

  const std::filesystem::path& directory() const { return directory_; }
  // The SHA-256 of the folder's SHA256SUMS, which holds every file's: one digest for the model.
  const std::string& sha256() const { return sha256_; }
  const SavedModel& saved() const { return saved_; }

  // `config` with the saved model's architecture, data schema and target normaliser.
  TrainConfig adopt_architecture(TrainConfig config) const;

  // The training data: `source`'s rows with the saved transforms, as config.training.init_scalers
  // and init_categories say (FittedTransformsUse).
  TimeSeriesDataset load_data(RowSource& source, const TrainConfig& config) const;

  // ConfigError unless `transforms` are the saved ones, or grew from them (a dataset loaded by
  // the caller for a refit, as a backtest's folds are): the same target normaliser, and each
  // saved encoder's categories first, with their codes.
  void check_transforms(const DataTransforms& transforms) const;

  // make_model_config of the adopted config and the refit data's schema, with each categorical's
  // embedding width pinned to the saved model's: an automatic width would follow a cardinality
  // grown by new categories.
  ModelConfig model_config(const TrainConfig& config, const InputSchema& schema) const;

  // Copies the saved weights into `model`, built from `model_config` (model_config() above).
  // ConfigError when that differs from the saved model's in more than grown categorical
  // cardinalities (and dropout and time chunks, which shape no weight).
  void load_weights(TFTModel& model, const ModelConfig& model_config) const;

 private:
  RefitSource(std::filesystem::path directory, SavedModel saved);

  std::filesystem::path directory_;
  std::string sha256_;
  SavedModel saved_;
  ModuleState weights_;
};

}  // namespace tft
