#include "config/train_config.h"

#include <cmath>
#include <map>

#include "common/error.h"
#include "common/format.h"

namespace tft {

namespace {

std::string number(double value) { return shortest_double(value); }

std::optional<ConfigProblem> problem(const std::string& field, const std::string& rule) {
  return ConfigProblem{field, field + ": " + rule};
}

std::optional<ConfigProblem> at_least(const std::string& field, std::int64_t value,
                                      std::int64_t minimum) {
  if (value >= minimum) return std::nullopt;
  return problem(field, "must be at least " + std::to_string(minimum) + " (got " +
                            std::to_string(value) + ")");
}

bool finite(double v) { return std::isfinite(v); }

bool valid_device(const std::string& device) {
  if (device == "cpu" || device == "cuda") return true;
  if (device.rfind("cuda:", 0) != 0 || device.size() == 5 || device.size() > 8) return false;
  for (std::size_t i = 5; i < device.size(); ++i) {
    if (device[i] < '0' || device[i] > '9') return false;
  }
  return true;
}

std::optional<ConfigProblem> data_problem(const DataConfig& d) {
  if (d.format != "auto" && d.format != "csv" && d.format != "parquet") {
    return problem("data.format",
                   "unsupported format \"" + d.format + "\" (expected: auto, csv or parquet)");
  }
  if (d.delimiter == '"' || d.delimiter == '\n' || d.delimiter == '\r' || d.delimiter == '\0') {
    return problem("data.delimiter", "must be one character other than a quote or line break");
  }
  if (d.time_column.empty()) return problem("data.time_column", "required (the time column)");
  if (d.target.empty()) return problem("data.target", "required (the column to forecast)");
  if (d.target_normalizer.center != TargetCenter::Statistic &&
      d.target_normalizer.center != TargetCenter::Auto &&
      d.target_normalizer.scope == TargetScope::Series) {
    return problem("data.target_normalizer.center",
                   std::string(to_string(d.target_normalizer.center)) +
                       " needs data.target_normalizer.scope encoder (a series' statistics have "
                       "no last value; use center: statistic)");
  }

  // Every column name once across roles; the time column is never a feature (use the derived
  // features), and group columns are constant within a series, so only static roles fit them.
  std::map<std::string, std::string> seen;  // name -> dotted key that claimed it
  auto is_group = [&](const std::string& name) {
    for (const std::string& g : d.group_columns) {
      if (g == name) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < d.group_columns.size(); ++i) {
    const std::string key = "data.group_columns[" + std::to_string(i) + "]";
    const std::string& name = d.group_columns[i];
    if (name.empty()) return problem(key, "column name is empty");
    if (name == d.time_column) return problem(key, "'" + name + "' is the time column");
    for (std::size_t j = 0; j < i; ++j) {
      if (d.group_columns[j] == name) return problem(key, "duplicate column '" + name + "'");
    }
  }
  auto claim = [&](const std::string& name, const std::string& key,
                   bool is_static) -> std::optional<ConfigProblem> {
    if (name.empty()) return problem(key, "column name is empty");
    if (name == d.time_column) {
      return problem(key, "'" + name +
                              "' is the time column; use derived features (day_of_week, "
                              "month, ...) or relative_time_idx instead");
    }
    if (!is_static && is_group(name)) {
      return problem(key, "'" + name +
                              "' is a group column (constant within a series); list it under "
                              "static_reals or static_categoricals");
    }
    auto [it, inserted] = seen.emplace(name, key);
    if (!inserted) {
      return problem(key, "column '" + name + "' is already used by " + it->second);
    }
    return std::nullopt;
  };
  if (auto p = claim(d.target, "data.target", false)) return p;
  const std::pair<const char*, const std::vector<std::string>*> reals[] = {
      {"static_reals", &d.static_reals},
      {"known_reals", &d.known_reals},
      {"unknown_reals", &d.unknown_reals}};
  for (const auto& [group, names] : reals) {
    const bool is_static = std::string(group) == "static_reals";
    for (std::size_t i = 0; i < names->size(); ++i) {
      const std::string key = "data." + std::string(group) + "[" + std::to_string(i) + "]";
      if (auto p = claim((*names)[i], key, is_static)) return p;
    }
  }
  const std::pair<const char*, const std::vector<CategoricalColumn>*> categoricals[] = {
      {"static_categoricals", &d.static_categoricals},
      {"known_categoricals", &d.known_categoricals},
      {"unknown_categoricals", &d.unknown_categoricals}};
  for (const auto& [group, columns] : categoricals) {
    const bool is_static = std::string(group) == "static_categoricals";
    for (std::size_t i = 0; i < columns->size(); ++i) {
      const std::string key = "data." + std::string(group) + "[" + std::to_string(i) + "]";
      const CategoricalColumn& c = (*columns)[i];
      if (auto p = claim(c.name, key, is_static)) return p;
      if (c.name == "relative_time_idx") {
        return problem(key, "relative_time_idx is a real; list it under known_reals");
      }
      if (c.embedding_dim < 0) {
        return problem(key + ".embedding_dim", "must be 0 (automatic) or positive (got " +
                                                   std::to_string(c.embedding_dim) + ")");
      }
    }
  }
  return std::nullopt;
}

std::optional<ConfigProblem> windows_problem(const WindowConfig& w) {
  if (auto p = at_least("windows.encoder_length", w.encoder_length, 1)) return p;
  if (auto p = at_least("windows.prediction_length", w.prediction_length, 1)) return p;
  if (auto p = at_least("windows.stride", w.stride, 1)) return p;
  return std::nullopt;
}

std::optional<ConfigProblem> split_problem(const SplitConfig& s, const WindowConfig& w) {
  if (s.validation_fraction && s.validation_steps) {
    return problem("split", "give validation_fraction or validation_steps, not both");
  }
  if (!s.validation_fraction && !s.validation_steps) {
    return problem("split", "give validation_fraction or validation_steps");
  }
  if (s.validation_fraction) {
    const double f = *s.validation_fraction;
    if (!(f >= 0.0 && f < 1.0)) {
      return problem("split.validation_fraction", "must be in [0, 1) (got " + number(f) + ")");
    }
  }
  if (s.validation_steps) {
    const std::int64_t n = *s.validation_steps;
    if (n < 0) return at_least("split.validation_steps", n, 0);
    if (n > 0 && n < w.prediction_length) {
      return problem("split.validation_steps",
                     "must be 0 (no validation) or at least windows.prediction_length " +
                         std::to_string(w.prediction_length) + " (got " + std::to_string(n) + ")");
    }
  }
  return std::nullopt;
}

std::optional<ConfigProblem> model_problem(const TrainConfig& c) {
  // ModelConfig::validate() owns the model's rules and already names fields "model.x";
  // a one-variable schema keeps its schema rules (about `data`, checked above) quiet.
  InputSchema target_only;
  target_only.target = "target";
  try {
    make_model_config(c, target_only).validate();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    const std::size_t colon = message.find(": ");
    return ConfigProblem{colon == std::string::npos ? "model" : message.substr(0, colon), message};
  }
  return std::nullopt;
}

std::optional<ConfigProblem> training_problem(const TrainingConfig& t) {
  if (auto p = at_least("training.epochs", t.epochs, 1)) return p;
  if (auto p = at_least("training.batch_size", t.batch_size, 1)) return p;
  if (!(finite(t.learning_rate) && t.learning_rate > 0.0)) {
    return problem("training.learning_rate",
                   "must be a positive number (got " + number(t.learning_rate) + ")");
  }
  if (!(finite(t.weight_decay) && t.weight_decay >= 0.0)) {
    return problem("training.weight_decay",
                   "must be 0 (off) or a positive number (got " + number(t.weight_decay) + ")");
  }
  if (auto p = at_least("training.lr_warmup_steps", t.lr_warmup_steps, 0)) return p;
  if (!(finite(t.gradient_clip_norm) && t.gradient_clip_norm >= 0.0)) {
    return problem("training.gradient_clip_norm", "must be 0 (off) or a positive number (got " +
                                                      number(t.gradient_clip_norm) + ")");
  }
  const LrScheduleConfig& s = t.lr_schedule;
  if (!(s.factor > 0.0 && s.factor < 1.0)) {
    return problem("training.lr_schedule.factor",
                   "must be in (0, 1) (got " + number(s.factor) + ")");
  }
  if (auto p = at_least("training.lr_schedule.patience", s.patience, 1)) return p;
  if (!(s.threshold >= 0.0 && s.threshold < 1.0)) {
    return problem("training.lr_schedule.threshold",
                   "must be in [0, 1) (got " + shortest_double(s.threshold) + ")");
  }
  if (auto p = at_least("training.lr_schedule.cooldown", s.cooldown, 0)) return p;
  if (!(finite(s.min_lr) && s.min_lr >= 0.0)) {
    return problem("training.lr_schedule.min_lr",
                   "must be a non-negative number (got " + number(s.min_lr) + ")");
  }
  if (s.kind != LrScheduleKind::None && s.min_lr > t.learning_rate) {
    return problem(
        "training.lr_schedule.min_lr",
        number(s.min_lr) + " is above training.learning_rate " + number(t.learning_rate));
  }
  if (auto p = at_least("training.early_stopping_patience", t.early_stopping_patience, 0)) {
    return p;
  }
  if (auto p = at_least("training.snapshot_every_steps", t.snapshot_every_steps, 0)) return p;
  if (auto p = at_least("training.threads", t.threads, 0)) return p;
  if (auto p = at_least("training.distributed.timeout_seconds", t.distributed.timeout_seconds, 1)) {
    return p;
  }
  if (!valid_device(t.device)) {
    return problem("training.device",
                   "expected cpu, cuda or cuda:<index> (got \"" + t.device + "\")");
  }
  if (t.precision == Precision::Fp16Mixed && t.device == "cpu") {
    return problem("training.precision",
                   "16-mixed needs a CUDA device (training.device is cpu): float16 needs loss "
                   "scaling and the CPU has no fast float16 products; use bf16-mixed on the CPU");
  }
  if (t.precision != Precision::Float32 && t.qat.enabled) {
    return problem("training.precision",
                   std::string(to_string(t.precision)) +
                       " cannot be combined with training.qat.enabled: quantization-aware "
                       "training emulates the int8 model in float32, and a reduced-precision "
                       "product would round the fake-quantized weights and inputs off their int8 "
                       "grid (bfloat16 keeps 8 significant bits, float16 11); use precision 32 "
                       "for QAT");
  }
  if (auto p = at_least("training.qat.start_epoch", t.qat.start_epoch, 1)) return p;
  if (auto p = at_least("training.qat.freeze_observers_epoch", t.qat.freeze_observers_epoch, 0)) {
    return p;
  }
  if (t.qat.enabled && t.qat.start_epoch > t.epochs) {
    return problem("training.qat.start_epoch",
                   std::to_string(t.qat.start_epoch) + " is after training.epochs " +
                       std::to_string(t.epochs) + " (quantization-aware training would not start)");
  }
  if (t.qat.freeze_observers_epoch != 0 && t.qat.freeze_observers_epoch < t.qat.start_epoch) {
    return problem("training.qat.freeze_observers_epoch",
                   std::to_string(t.qat.freeze_observers_epoch) +
                       " is before training.qat.start_epoch " + std::to_string(t.qat.start_epoch) +
                       " (the observers would freeze before they observe; 0: never freeze)");
  }
  return std::nullopt;
}

}  // namespace

bool operator==(const CategoricalColumn& a, const CategoricalColumn& b) {
  return a.name == b.name && a.embedding_dim == b.embedding_dim;
}
bool operator!=(const CategoricalColumn& a, const CategoricalColumn& b) { return !(a == b); }

const std::vector<std::string>& derived_feature_names() {
  static const std::vector<std::string> names = {"day_of_week", "month", "day_of_month", "hour",
                                                 "relative_time_idx"};
  return names;
}

bool is_derived_feature(const std::string& name) {
  for (const std::string& n : derived_feature_names()) {
    if (n == name) return true;
  }
  return false;
}

std::vector<std::string> unit_names_for(const ModelSettings& model) {
  ModelConfig m;
  m.decoder_layers = model.decoder_layers;
  return m.unit_names();
}

ModelConfig make_model_config(const TrainConfig& config, const InputSchema& schema) {
  ModelConfig m;
  m.hidden_size = config.model.hidden_size;
  m.attention_heads = config.model.attention_heads;
  m.dropout = config.model.dropout;
  m.embedding_dropout = config.model.embedding_dropout;
  m.lstm_layers = config.model.lstm_layers;
  m.decoder_layers = config.model.decoder_layers;
  m.quantiles = config.model.quantiles;
  m.output_init = config.model.output_init;
  m.unit_chunks = config.model.unit_chunks;
  m.quantization.enabled = config.training.qat.enabled;
  m.quantization.weight_bits = config.training.qat.weight_bits;
  m.quantization.activation_bits = config.training.qat.activation_bits;
  m.encoder_length = config.windows.encoder_length;
  m.prediction_length = config.windows.prediction_length;
  m.schema = schema;
  return m;
}

std::optional<ConfigProblem> TrainConfig::find_problem() const {
  if (auto p = data_problem(data)) return p;
  if (auto p = windows_problem(windows)) return p;
  if (auto p = split_problem(split, windows)) return p;
  if (auto p = model_problem(*this)) return p;
  if (auto p = training_problem(training)) return p;
  if (auto p = checkpoint.find_problem(unit_names_for(model).size())) {
    // CheckpointProblem messages already read "checkpoint.<field>: ...".
    return ConfigProblem{"checkpoint." + p->field, p->message};
  }
  if (output.directory.empty()) return problem("output.directory", "must not be empty");
  return std::nullopt;
}

void TrainConfig::validate() const {
  if (auto p = find_problem()) throw ConfigError(p->message);
}

bool operator==(const TrainConfig& a, const TrainConfig& b) {
  const DataConfig& x = a.data;
  const DataConfig& y = b.data;
  const bool data_equal =
      x.path == y.path && x.format == y.format && x.delimiter == y.delimiter &&
      x.time_column == y.time_column && x.time_format == y.time_format &&
      x.group_columns == y.group_columns && x.target == y.target &&
      x.static_reals == y.static_reals && x.static_categoricals == y.static_categoricals &&
      x.known_reals == y.known_reals && x.known_categoricals == y.known_categoricals &&
      x.unknown_reals == y.unknown_reals && x.unknown_categoricals == y.unknown_categoricals &&
      x.missing_values == y.missing_values && x.na_values == y.na_values &&
      x.scaling == y.scaling && x.target_normalizer == y.target_normalizer;
  const bool windows_equal = a.windows.encoder_length == b.windows.encoder_length &&
                             a.windows.prediction_length == b.windows.prediction_length &&
                             a.windows.stride == b.windows.stride;
  const bool split_equal = a.split.validation_fraction == b.split.validation_fraction &&
                           a.split.validation_steps == b.split.validation_steps;
  const ModelSettings& m = a.model;
  const ModelSettings& n = b.model;
  const bool model_equal = m.hidden_size == n.hidden_size &&
                           m.attention_heads == n.attention_heads && m.dropout == n.dropout &&
                           m.embedding_dropout == n.embedding_dropout &&
                           m.lstm_layers == n.lstm_layers && m.decoder_layers == n.decoder_layers &&
                           m.quantiles == n.quantiles && m.output_init == n.output_init &&
                           m.unit_chunks == n.unit_chunks && m.seasonality == n.seasonality;
  const TrainingConfig& t = a.training;
  const TrainingConfig& u = b.training;
  const bool training_equal =
      t.epochs == u.epochs && t.batch_size == u.batch_size && t.learning_rate == u.learning_rate &&
      t.weight_decay == u.weight_decay && t.lr_warmup_steps == u.lr_warmup_steps &&
      t.gradient_clip_norm == u.gradient_clip_norm && t.lr_schedule.kind == u.lr_schedule.kind &&
      t.lr_schedule.factor == u.lr_schedule.factor &&
      t.lr_schedule.patience == u.lr_schedule.patience &&
      t.lr_schedule.min_lr == u.lr_schedule.min_lr &&
      t.lr_schedule.threshold == u.lr_schedule.threshold &&
      t.lr_schedule.cooldown == u.lr_schedule.cooldown &&
      t.early_stopping_patience == u.early_stopping_patience &&
      t.snapshot_every_steps == u.snapshot_every_steps && t.seed == u.seed &&
      t.threads == u.threads && t.device == u.device && t.precision == u.precision &&
      t.distributed.backend == u.distributed.backend &&
      t.distributed.timeout_seconds == u.distributed.timeout_seconds &&
      t.qat.enabled == u.qat.enabled && t.qat.start_epoch == u.qat.start_epoch &&
      t.qat.weight_bits == u.qat.weight_bits && t.qat.activation_bits == u.qat.activation_bits &&
      t.qat.freeze_observers_epoch == u.qat.freeze_observers_epoch && t.init_from == u.init_from &&
      t.init_scalers == u.init_scalers && t.init_categories == u.init_categories;
  return data_equal && windows_equal && split_equal && model_equal && training_equal &&
         a.checkpoint == b.checkpoint && a.output.directory == b.output.directory &&
         a.output.calibration == b.output.calibration &&
         a.output.median_rounding == b.output.median_rounding &&
         a.backtest.folds == b.backtest.folds && a.backtest.mode == b.backtest.mode &&
         a.backtest.refit_epochs == b.backtest.refit_epochs && a.base_dir == b.base_dir;
}

bool operator!=(const TrainConfig& a, const TrainConfig& b) { return !(a == b); }

const char* to_string(MissingValuePolicy policy) {
  switch (policy) {
    case MissingValuePolicy::Error: return "error";
    case MissingValuePolicy::ForwardFill: return "forward_fill";
    case MissingValuePolicy::DropRow: return "drop_row";
  }
  return "error";
}

const char* to_string(TimeFormat format) {
  switch (format) {
    case TimeFormat::Auto: return "auto";
    case TimeFormat::Integer: return "integer";
    case TimeFormat::Iso8601: return "iso8601";
  }
  return "auto";
}

const char* to_string(ScalingMode mode) {
  switch (mode) {
    case ScalingMode::PerSeries: return "per_series";
    case ScalingMode::Global: return "global";
    case ScalingMode::None: return "none";
  }
  return "per_series";
}

bool operator==(const TargetNormalizerConfig& a, const TargetNormalizerConfig& b) {
  return a.scope == b.scope && a.center == b.center && a.method == b.method &&
         a.transformation == b.transformation;
}

bool operator!=(const TargetNormalizerConfig& a, const TargetNormalizerConfig& b) {
  return !(a == b);
}

const char* to_string(TargetScope scope) {
  switch (scope) {
    case TargetScope::Auto: return "auto";
    case TargetScope::Series: return "series";
    case TargetScope::Encoder: return "encoder";
  }
  return "?";
}

const char* to_string(TargetCenter center) {
  switch (center) {
    case TargetCenter::Auto: return "auto";
    case TargetCenter::Statistic: return "statistic";
    case TargetCenter::Last: return "last";
    case TargetCenter::Seasonal: return "seasonal";
  }
  return "?";
}

const char* to_string(TargetMethod method) {
  return method == TargetMethod::Standard ? "standard" : "robust";
}

const char* to_string(TargetTransformation transformation) {
  switch (transformation) {
    case TargetTransformation::None: return "none";
    case TargetTransformation::Log: return "log";
    case TargetTransformation::Log1p: return "log1p";
    case TargetTransformation::Softplus: return "softplus";
  }
  return "none";
}

const char* to_string(DistributedBackend backend) {
  switch (backend) {
    case DistributedBackend::Auto: return "auto";
    case DistributedBackend::Gloo: return "gloo";
    case DistributedBackend::Nccl: return "nccl";
  }
  return "auto";
}

const char* to_string(InitScalers scalers) {
  return scalers == InitScalers::Refit ? "refit" : "keep";
}

const char* to_string(BacktestMode mode) {
  return mode == BacktestMode::Refit ? "refit" : "scratch";
}

const char* to_string(InitCategories categories) {
  return categories == InitCategories::Grow ? "grow" : "unknown";
}

bool TrainConfig::was_given(const std::string& dotted_key) const {
  for (std::string key = dotted_key;;) {
    if (given_keys.count(key) > 0) return true;
    const std::size_t cut = key.find_last_of('.');
    if (cut == std::string::npos) return false;
    key.resize(cut);
  }
}

const char* to_string(CalibrationMethod method) {
  return method == CalibrationMethod::Conformal ? "conformal" : "none";
}

const char* to_string(MedianRounding rounding) {
  switch (rounding) {
    case MedianRounding::Auto: return "auto";
    case MedianRounding::Whole: return "whole";
    case MedianRounding::None: return "none";
  }
  return "auto";
}

const char* to_string(LrScheduleKind kind) {
  switch (kind) {
    case LrScheduleKind::None: return "none";
    case LrScheduleKind::ReduceOnPlateau: return "reduce_on_plateau";
  }
  return "none";
}

}  // namespace tft
