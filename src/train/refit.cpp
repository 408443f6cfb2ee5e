#include "train/refit.h"

#include <algorithm>
#include <utility>

#include <ATen/ops/cat.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/sha256.h"
#include "config/train_config_io.h"
#include "store/model_config_json.h"

namespace tft {

namespace fs = std::filesystem;

namespace {

// The keys a refit takes from the saved model (refit.h): what shapes the weights, or what the
// fitted transforms were fitted for. The target normaliser is taken from the transforms, where
// it is resolved (no auto).
constexpr const char* kSavedKeys[] = {"data.group_columns",
                                      "data.target",
                                      "data.static_reals",
                                      "data.static_categoricals",
                                      "data.known_reals",
                                      "data.known_categoricals",
                                      "data.unknown_reals",
                                      "data.unknown_categoricals",
                                      "data.scaling",
                                      "windows.encoder_length",
                                      "windows.prediction_length",
                                      "model.hidden_size",
                                      "model.attention_heads",
                                      "model.lstm_layers",
                                      "model.decoder_layers",
                                      "model.quantiles",
                                      "training.qat.enabled",
                                      "training.qat.weight_bits",
                                      "training.qat.activation_bits"};

// Whether `inner` is `outer` or lies inside it (both absolute and normal).
bool is_within(const fs::path& inner, const fs::path& outer) {
  const fs::path relative = inner.lexically_relative(outer);
  return !relative.empty() && *relative.begin() != "..";
}

[[noreturn]] void contradiction(const std::string& key, const std::string& given,
                                const std::string& saved, const fs::path& directory) {
  throw ConfigError("training.init_from: " + key + " is " + given + " here but " + saved +
                    " in the saved model " + directory.string() +
                    "; a refit keeps the saved model's architecture and data schema (leave " + key +
                    " out, or set it to " + saved + ")");
}

// The saved model's ModelConfig as this one should be: cardinalities grown by new categories
// (never shrunk), dropout and time chunks the run's own.
bool same_architecture(ModelConfig saved, ModelConfig run) {
  for (ModelConfig* config : {&saved, &run}) {
    for (auto* vars : {&config->schema.static_categoricals, &config->schema.known_categoricals,
                       &config->schema.unknown_categoricals}) {
      for (CategoricalVariable& v : *vars)
        v.embedding_dim = embedding_dim_for(v, config->hidden_size);
    }
  }
  auto grow = [](std::vector<CategoricalVariable>& saved_vars,
                 const std::vector<CategoricalVariable>& run_vars) {
    if (saved_vars.size() != run_vars.size()) return;
    for (std::size_t i = 0; i < saved_vars.size(); ++i) {
      if (run_vars[i].cardinality > saved_vars[i].cardinality) {
        saved_vars[i].cardinality = run_vars[i].cardinality;
      }
    }
  };
  grow(saved.schema.static_categoricals, run.schema.static_categoricals);
  grow(saved.schema.known_categoricals, run.schema.known_categoricals);
  grow(saved.schema.unknown_categoricals, run.schema.unknown_categoricals);
  saved.dropout = run.dropout;
  saved.embedding_dropout = run.embedding_dropout;
  saved.unit_chunks = run.unit_chunks;
  return model_config_to_json(saved) == model_config_to_json(run);
}

// A saved embedding table of `rows` rows stretched to `wanted` rows: the new rows copy row 0,
// the unknown bucket's.
at::Tensor grown_embedding(const at::Tensor& saved, std::int64_t wanted) {
  const std::int64_t extra = wanted - saved.size(0);
  return at::cat({saved, saved.narrow(0, 0, 1).expand({extra, saved.size(1)})}, 0);
}

}  // namespace

RefitSource::RefitSource(fs::path directory, SavedModel saved)
    : directory_(std::move(directory)), saved_(std::move(saved)) {
  sha256_ = sha256_hex(read_file(directory_ / "SHA256SUMS"));
  weights_ = copy_module_state(*saved_.model());
}

RefitSource RefitSource::open(const TrainConfig& config) {
  const fs::path directory = fs::weakly_canonical(fs::absolute(config.training.init_from));
  if (!fs::is_directory(directory)) {
    throw IoError("training.init_from: '" + config.training.init_from +
                  "' is not a folder (a saved model's model/ folder is expected)");
  }
  const fs::path output = fs::weakly_canonical(fs::absolute(config.output.directory));
  if (is_within(directory, output) || is_within(output, directory)) {
    throw ConfigError("training.init_from: the saved model " + directory.string() +
                      " would be written by this run, whose output.directory is " +
                      output.string() + "; a refit writes its model elsewhere and never " +
                      "touches the one it starts from: choose another output.directory");
  }
  SavedModel saved = SavedModel::load(directory);
  return RefitSource(directory, std::move(saved));
}

TrainConfig RefitSource::adopt_architecture(TrainConfig config) const {
  const TrainConfig& saved = saved_.config();
  const std::set<std::string> given = config.given_keys;
  for (const char* key : kSavedKeys) {
    const std::string saved_value = get_config_value(saved, key);
    const std::string value = get_config_value(config, key);
    if (value == saved_value) continue;
    if (config.was_given(key)) contradiction(key, value, saved_value, directory_);
    set_config_value(config, key, saved_value);
  }
  // The normaliser as the saved model resolved it.
  const TargetNormalizerConfig& fitted = saved_.transforms().target_normalizer;
  TargetNormalizerConfig& wanted = config.data.target_normalizer;
  auto check = [&](const char* key, bool given_auto, bool differs, const char* shown,
                   const char* saved_shown) {
    if (differs && !given_auto && config.was_given(key)) {
      contradiction(key, shown, saved_shown, directory_);
    }
  };
  check("data.target_normalizer.scope", wanted.scope == TargetScope::Auto,
        wanted.scope != fitted.scope, to_string(wanted.scope), to_string(fitted.scope));
  check("data.target_normalizer.center", wanted.center == TargetCenter::Auto,
        wanted.center != fitted.center, to_string(wanted.center), to_string(fitted.center));
  check("data.target_normalizer.method", false, wanted.method != fitted.method,
        to_string(wanted.method), to_string(fitted.method));
  check("data.target_normalizer.transformation", false,
        wanted.transformation != fitted.transformation, to_string(wanted.transformation),
        to_string(fitted.transformation));
  wanted = fitted;
  config.given_keys = given;
  config.validate();
  return config;
}

TimeSeriesDataset RefitSource::load_data(RowSource& source, const TrainConfig& config) const {
  FittedTransformsUse use;
  use.refit_scalers = config.training.init_scalers == InitScalers::Refit;
  use.fit_unseen_series = true;
  use.grow_categories = config.training.init_categories == InitCategories::Grow;
  return TimeSeriesDataset::from_source(source, config, &saved_.transforms(), use);
}

void RefitSource::check_transforms(const DataTransforms& transforms) const {
  const DataTransforms& saved = saved_.transforms();
  bool same = transforms.target_normalizer == saved.target_normalizer &&
              transforms.target_season == saved.target_season &&
              transforms.encoders.size() == saved.encoders.size();
  for (const auto& [name, encoder] : saved.encoders) {
    const auto it = transforms.encoders.find(name);
    same = same && it != transforms.encoders.end() &&
           std::equal(encoder.categories().begin(), encoder.categories().end(),
                      it->second.categories().begin(),
                      it->second.categories().begin() +
                          std::min(it->second.categories().size(), encoder.categories().size())) &&
           it->second.categories().size() >= encoder.categories().size();
  }
  if (!same) {
    throw ConfigError(
        "training.init_from: the dataset was not loaded with the saved model's transforms (" +
        directory_.string() +
        "); give the trainer the rows (Trainer(config) or Trainer(config, source)), which loads "
        "them so");
  }
}

ModelConfig RefitSource::model_config(const TrainConfig& config, const InputSchema& schema) const {
  ModelConfig run = make_model_config(config, schema);
  const ModelConfig& saved = saved_.model_config();
  auto pin = [&](std::vector<CategoricalVariable>& run_vars,
                 const std::vector<CategoricalVariable>& saved_vars) {
    for (std::size_t i = 0; i < run_vars.size() && i < saved_vars.size(); ++i) {
      run_vars[i].embedding_dim = embedding_dim_for(saved_vars[i], saved.hidden_size);
    }
  };
  pin(run.schema.static_categoricals, saved.schema.static_categoricals);
  pin(run.schema.known_categoricals, saved.schema.known_categoricals);
  pin(run.schema.unknown_categoricals, saved.schema.unknown_categoricals);
  return run;
}

void RefitSource::load_weights(TFTModel& model, const ModelConfig& model_config) const {
  if (!same_architecture(saved_.model_config(), model_config)) {
    throw ConfigError(
        "training.init_from: the model this config and data make differs from the "
        "saved model " +
        directory_.string() +
        " (model_config.json: " + model_config_to_json(saved_.model_config()).dump() +
        "; this run: " + model_config_to_json(model_config).dump() + ")");
  }
  const ModuleState shapes = copy_module_state(*model);
  ModuleState state = weights_;
  for (auto& [name, tensor] : state.parameters) {
    for (const auto& [run_name, run_tensor] : shapes.parameters) {
      if (run_name == name && run_tensor.dim() == 2 && tensor.dim() == 2 &&
          run_tensor.size(1) == tensor.size(1) && run_tensor.size(0) > tensor.size(0) &&
          name.find("embedding_") != std::string::npos) {
        tensor = grown_embedding(tensor, run_tensor.size(0));
      }
    }
  }
  load_module_state(*model, state, (directory_ / "weights.pt").string());
}

}  // namespace tft
