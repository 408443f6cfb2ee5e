#include "config/config_fields.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <utility>

#include "common/format.h"

namespace tft {
namespace config_detail {

namespace {

template <typename T>
using Ref = T& (*)(TrainConfig&);

template <typename T>
const T& read(Ref<T> ref, const TrainConfig& c) {
  return ref(const_cast<TrainConfig&>(c));  // ref only selects a member; nothing is written
}

// ---------------------------------------------------------------------------------------
// Field builders

Field positive_int(const char* key, Ref<std::int64_t> ref) {
  return {key, [ref](const TrainConfig& c) { return std::to_string(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_positive_int(v, k);
          }};
}

Field non_negative_int(const char* key, Ref<std::int64_t> ref) {
  return {key, [ref](const TrainConfig& c) { return std::to_string(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_non_negative_int(v, k);
          }};
}

Field boolean(const char* key, Ref<bool> ref) {
  return {key, [ref](const TrainConfig& c) { return std::string(read(ref, c) ? "true" : "false"); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_bool(v, k);
          }};
}

Field number(const char* key, Ref<double> ref) {
  return {key, [ref](const TrainConfig& c) { return yaml_double(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_number(v, k);
          }};
}

Field string(const char* key, Ref<std::string> ref) {
  return {key, [ref](const TrainConfig& c) { return yaml_string(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_string(v, k);
          }};
}

Field path(const char* key, Ref<std::string> ref) {
  return {key, [ref](const TrainConfig& c) { return yaml_string(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext& ctx) {
            ref(c) = resolve_path(as_string(v, k), ctx.base_dir);
          }};
}

Field string_list(const char* key, Ref<std::vector<std::string>> ref) {
  return {key, [ref](const TrainConfig& c) { return yaml_string_list(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = as_string_list(v, k);
          }};
}

std::string categoricals_text(const std::vector<CategoricalColumn>& columns) {
  std::string out = "[";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out += ", ";
    if (columns[i].embedding_dim == 0) {
      out += yaml_string(columns[i].name);
    } else {
      out += "{name: " + yaml_string(columns[i].name) +
             ", embedding_dim: " + std::to_string(columns[i].embedding_dim) + "}";
    }
  }
  return out + "]";
}

std::vector<CategoricalColumn> parse_categoricals(const YamlValue& v, const std::string& key) {
  if (v.kind != YamlValue::Kind::Seq) {
    fail_at(v.where, key, "expected a sequence of column names, got " + v.shown);
  }
  std::vector<CategoricalColumn> out;
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    const YamlValue& item = v.items[i];
    const std::string item_key = key + "[" + std::to_string(i) + "]";
    CategoricalColumn column;
    if (item.kind == YamlValue::Kind::String) {
      column.name = item.text;
    } else if (item.kind == YamlValue::Kind::Map) {
      bool has_name = false;
      for (const auto& entry : item.entries) {
        const std::string& name = entry.key;
        const YamlValue& value = entry.value;
        if (name == "name") {
          column.name = as_string(value, item_key + ".name");
          has_name = true;
        } else if (name == "embedding_dim") {
          column.embedding_dim = as_non_negative_int(value, item_key + ".embedding_dim");
        } else {
          fail_at(entry.where, item_key,
                  "unknown key '" + name + "' (expected one of: name, embedding_dim)");
        }
      }
      if (!has_name) fail_at(item.where, item_key, "requires key 'name'");
    } else {
      fail_at(item.where, item_key,
              "expected a column name or a mapping {name, embedding_dim}, got " + item.shown);
    }
    out.push_back(column);
  }
  return out;
}

Field categoricals(const char* key, Ref<std::vector<CategoricalColumn>> ref) {
  return {key, [ref](const TrainConfig& c) { return categoricals_text(read(ref, c)); },
          [ref](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
            ref(c) = parse_categoricals(v, k);
          }};
}

// An enum spelled by its to_string() names.
template <typename E>
Field choice(const char* key, Ref<E> ref, std::vector<E> values) {
  std::vector<std::string> names;
  for (E e : values) names.emplace_back(to_string(e));
  return {key, [ref](const TrainConfig& c) { return std::string(to_string(read(ref, c))); },
          [ref, values, names](TrainConfig& c, const YamlValue& v, const std::string& k,
                               const SetContext&) {
            const std::string name = as_choice(v, k, names);
            for (std::size_t i = 0; i < names.size(); ++i) {
              if (names[i] == name) ref(c) = values[i];
            }
          }};
}

// 32 (a YAML integer, or the string "32" or Lightning's "32-true"), "bf16-mixed" or "16-mixed".
Precision as_precision(const YamlValue& v, const std::string& key) {
  if (v.kind == YamlValue::Kind::UInt && v.uint == 32) return Precision::Float32;
  return *precision_from_string(as_choice(v, key, {"32", "32-true", "bf16-mixed", "16-mixed"}));
}

std::string unit_chunks_text(const std::map<std::string, std::int64_t>& chunks) {
  std::string out = "{";
  for (const auto& [unit, count] : chunks) {
    if (out.size() > 1) out += ", ";
    out += yaml_string(unit) + ": " + std::to_string(count);
  }
  return out + "}";
}

}  // namespace

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty()) return path;
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> f;
    // data
    f.push_back(path("data.path", [](TrainConfig& c) -> std::string& { return c.data.path; }));
    f.push_back(
        string("data.format", [](TrainConfig& c) -> std::string& { return c.data.format; }));
    f.push_back(
        Field{"data.delimiter",
              [](const TrainConfig& c) { return yaml_string(std::string(1, c.data.delimiter)); },
              [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
                const std::string text = v.kind == YamlValue::Kind::String ? v.text : "";
                if (v.kind != YamlValue::Kind::String || text.size() != 1) {
                  fail_at(v.where, k, "expected one character, got " + v.shown);
                }
                c.data.delimiter = text[0];
              }});
    f.push_back(string("data.time_column",
                       [](TrainConfig& c) -> std::string& { return c.data.time_column; }));
    f.push_back(choice<TimeFormat>("data.time_format",
                                   [](TrainConfig& c) -> TimeFormat& { return c.data.time_format; },
                                   {TimeFormat::Auto, TimeFormat::Integer, TimeFormat::Iso8601}));
    f.push_back(string_list("data.group_columns", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.group_columns;
    }));
    f.push_back(
        string("data.target", [](TrainConfig& c) -> std::string& { return c.data.target; }));
    f.push_back(string_list("data.static_reals", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.static_reals;
    }));
    f.push_back(categoricals("data.static_categoricals",
                             [](TrainConfig& c) -> std::vector<CategoricalColumn>& {
                               return c.data.static_categoricals;
                             }));
    f.push_back(string_list("data.known_reals", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.known_reals;
    }));
    f.push_back(categoricals("data.known_categoricals",
                             [](TrainConfig& c) -> std::vector<CategoricalColumn>& {
                               return c.data.known_categoricals;
                             }));
    f.push_back(string_list("data.unknown_reals", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.unknown_reals;
    }));
    f.push_back(categoricals("data.unknown_categoricals",
                             [](TrainConfig& c) -> std::vector<CategoricalColumn>& {
                               return c.data.unknown_categoricals;
                             }));
    f.push_back(choice<MissingValuePolicy>(
        "data.missing_values",
        [](TrainConfig& c) -> MissingValuePolicy& { return c.data.missing_values; },
        {MissingValuePolicy::Error, MissingValuePolicy::ForwardFill, MissingValuePolicy::DropRow}));
    f.push_back(string_list("data.na_values", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.na_values;
    }));
    f.push_back(choice<ScalingMode>(
        "data.scaling", [](TrainConfig& c) -> ScalingMode& { return c.data.scaling; },
        {ScalingMode::PerSeries, ScalingMode::Global, ScalingMode::None}));
    f.push_back(choice<TargetScope>(
        "data.target_normalizer.scope",
        [](TrainConfig& c) -> TargetScope& { return c.data.target_normalizer.scope; },
        {TargetScope::Auto, TargetScope::Series, TargetScope::Encoder}));
    f.push_back(choice<TargetCenter>(
        "data.target_normalizer.center",
        [](TrainConfig& c) -> TargetCenter& { return c.data.target_normalizer.center; },
        {TargetCenter::Auto, TargetCenter::Statistic, TargetCenter::Last, TargetCenter::Seasonal}));
    f.push_back(choice<TargetMethod>(
        "data.target_normalizer.method",
        [](TrainConfig& c) -> TargetMethod& { return c.data.target_normalizer.method; },
        {TargetMethod::Standard, TargetMethod::Robust}));
    f.push_back(choice<TargetTransformation>(
        "data.target_normalizer.transformation",
        [](TrainConfig& c) -> TargetTransformation& {
          return c.data.target_normalizer.transformation;
        },
        {TargetTransformation::None, TargetTransformation::Log, TargetTransformation::Log1p,
         TargetTransformation::Softplus}));
    // windows
    f.push_back(positive_int("windows.encoder_length", [](TrainConfig& c) -> std::int64_t& {
      return c.windows.encoder_length;
    }));
    f.push_back(positive_int("windows.prediction_length", [](TrainConfig& c) -> std::int64_t& {
      return c.windows.prediction_length;
    }));
    f.push_back(positive_int("windows.stride",
                             [](TrainConfig& c) -> std::int64_t& { return c.windows.stride; }));
    // split: one of two keys; null clears, setting one clears the other
    f.push_back(
        Field{"split.validation_fraction",
              [](const TrainConfig& c) {
                return c.split.validation_fraction ? yaml_double(*c.split.validation_fraction)
                                                   : std::string("null");
              },
              [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
                if (v.kind == YamlValue::Kind::Null) {
                  c.split.validation_fraction.reset();
                  return;
                }
                c.split.validation_fraction = as_number(v, k);
                c.split.validation_steps.reset();
              }});
    f.push_back(
        Field{"split.validation_steps",
              [](const TrainConfig& c) {
                return c.split.validation_steps ? std::to_string(*c.split.validation_steps)
                                                : std::string("null");
              },
              [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
                if (v.kind == YamlValue::Kind::Null) {
                  c.split.validation_steps.reset();
                  return;
                }
                c.split.validation_steps = as_non_negative_int(v, k);
                c.split.validation_fraction.reset();
              }});
    // model
    f.push_back(positive_int("model.hidden_size",
                             [](TrainConfig& c) -> std::int64_t& { return c.model.hidden_size; }));
    f.push_back(positive_int("model.attention_heads", [](TrainConfig& c) -> std::int64_t& {
      return c.model.attention_heads;
    }));
    f.push_back(number("model.dropout", [](TrainConfig& c) -> double& { return c.model.dropout; }));
    f.push_back(number("model.embedding_dropout",
                       [](TrainConfig& c) -> double& { return c.model.embedding_dropout; }));
    f.push_back(positive_int("model.lstm_layers",
                             [](TrainConfig& c) -> std::int64_t& { return c.model.lstm_layers; }));
    f.push_back(positive_int("model.decoder_layers", [](TrainConfig& c) -> std::int64_t& {
      return c.model.decoder_layers;
    }));
    f.push_back(Field{"model.quantiles",
                      [](const TrainConfig& c) { return yaml_double_list(c.model.quantiles); },
                      [](TrainConfig& c, const YamlValue& v, const std::string& k,
                         const SetContext&) { c.model.quantiles = as_number_list(v, k); }});
    f.push_back(choice<OutputInit>(
        "model.output_init", [](TrainConfig& c) -> OutputInit& { return c.model.output_init; },
        {OutputInit::Center, OutputInit::Uniform}));
    f.push_back(Field{
        "model.unit_chunks",
        [](const TrainConfig& c) { return unit_chunks_text(c.model.unit_chunks); },
        [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
          if (v.kind != YamlValue::Kind::Map) {
            fail_at(v.where, k, "expected a mapping of unit names to chunk counts, got " + v.shown);
          }
          std::map<std::string, std::int64_t> chunks;
          for (const auto& entry : v.entries) {
            chunks[entry.key] = as_positive_int(entry.value, k + "." + entry.key);
          }
          c.model.unit_chunks = chunks;
        }});
    f.push_back(non_negative_int(
        "model.seasonality", [](TrainConfig& c) -> std::int64_t& { return c.model.seasonality; }));
    // training
    f.push_back(positive_int("training.epochs",
                             [](TrainConfig& c) -> std::int64_t& { return c.training.epochs; }));
    f.push_back(positive_int("training.batch_size", [](TrainConfig& c) -> std::int64_t& {
      return c.training.batch_size;
    }));
    f.push_back(number("training.learning_rate",
                       [](TrainConfig& c) -> double& { return c.training.learning_rate; }));
    f.push_back(number("training.weight_decay",
                       [](TrainConfig& c) -> double& { return c.training.weight_decay; }));
    f.push_back(non_negative_int("training.lr_warmup_steps", [](TrainConfig& c) -> std::int64_t& {
      return c.training.lr_warmup_steps;
    }));
    f.push_back(number("training.gradient_clip_norm",
                       [](TrainConfig& c) -> double& { return c.training.gradient_clip_norm; }));
    f.push_back(choice<LrScheduleKind>(
        "training.lr_schedule.kind",
        [](TrainConfig& c) -> LrScheduleKind& { return c.training.lr_schedule.kind; },
        {LrScheduleKind::None, LrScheduleKind::ReduceOnPlateau}));
    f.push_back(number("training.lr_schedule.factor",
                       [](TrainConfig& c) -> double& { return c.training.lr_schedule.factor; }));
    f.push_back(positive_int("training.lr_schedule.patience", [](TrainConfig& c) -> std::int64_t& {
      return c.training.lr_schedule.patience;
    }));
    f.push_back(number("training.lr_schedule.min_lr",
                       [](TrainConfig& c) -> double& { return c.training.lr_schedule.min_lr; }));
    f.push_back(number("training.lr_schedule.threshold",
                       [](TrainConfig& c) -> double& { return c.training.lr_schedule.threshold; }));
    f.push_back(non_negative_int(
        "training.lr_schedule.cooldown",
        [](TrainConfig& c) -> std::int64_t& { return c.training.lr_schedule.cooldown; }));
    f.push_back(non_negative_int(
        "training.early_stopping_patience",
        [](TrainConfig& c) -> std::int64_t& { return c.training.early_stopping_patience; }));
    f.push_back(non_negative_int(
        "training.snapshot_every_steps",
        [](TrainConfig& c) -> std::int64_t& { return c.training.snapshot_every_steps; }));
    f.push_back(Field{"training.seed",
                      [](const TrainConfig& c) { return std::to_string(c.training.seed); },
                      [](TrainConfig& c, const YamlValue& v, const std::string& k,
                         const SetContext&) { c.training.seed = as_uint64(v, k); }});
    f.push_back(non_negative_int(
        "training.threads", [](TrainConfig& c) -> std::int64_t& { return c.training.threads; }));
    f.push_back(string("training.device",
                       [](TrainConfig& c) -> std::string& { return c.training.device; }));
    f.push_back(
        Field{"training.precision",
              [](const TrainConfig& c) { return std::string(to_string(c.training.precision)); },
              [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
                c.training.precision = as_precision(v, k);
              }});
    f.push_back(choice<DistributedBackend>(
        "training.distributed.backend",
        [](TrainConfig& c) -> DistributedBackend& { return c.training.distributed.backend; },
        {DistributedBackend::Auto, DistributedBackend::Gloo, DistributedBackend::Nccl}));
    f.push_back(positive_int(
        "training.distributed.timeout_seconds",
        [](TrainConfig& c) -> std::int64_t& { return c.training.distributed.timeout_seconds; }));
    f.push_back(boolean("training.qat.enabled",
                        [](TrainConfig& c) -> bool& { return c.training.qat.enabled; }));
    f.push_back(positive_int("training.qat.start_epoch", [](TrainConfig& c) -> std::int64_t& {
      return c.training.qat.start_epoch;
    }));
    f.push_back(positive_int("training.qat.weight_bits", [](TrainConfig& c) -> std::int64_t& {
      return c.training.qat.weight_bits;
    }));
    f.push_back(positive_int("training.qat.activation_bits", [](TrainConfig& c) -> std::int64_t& {
      return c.training.qat.activation_bits;
    }));
    f.push_back(non_negative_int(
        "training.qat.freeze_observers_epoch",
        [](TrainConfig& c) -> std::int64_t& { return c.training.qat.freeze_observers_epoch; }));
    f.push_back(path("training.init_from",
                     [](TrainConfig& c) -> std::string& { return c.training.init_from; }));
    f.push_back(
        choice<InitScalers>("training.init_scalers",
                            [](TrainConfig& c) -> InitScalers& { return c.training.init_scalers; },
                            {InitScalers::Keep, InitScalers::Refit}));
    f.push_back(choice<InitCategories>(
        "training.init_categories",
        [](TrainConfig& c) -> InitCategories& { return c.training.init_categories; },
        {InitCategories::Unknown, InitCategories::Grow}));
    // output
    f.push_back(path("output.directory",
                     [](TrainConfig& c) -> std::string& { return c.output.directory; }));
    f.push_back(choice<CalibrationMethod>(
        "output.calibration",
        [](TrainConfig& c) -> CalibrationMethod& { return c.output.calibration; },
        {CalibrationMethod::None, CalibrationMethod::Conformal}));
    f.push_back(choice<MedianRounding>(
        "output.median_rounding",
        [](TrainConfig& c) -> MedianRounding& { return c.output.median_rounding; },
        {MedianRounding::Auto, MedianRounding::Whole, MedianRounding::None}));
    // backtest
    f.push_back(positive_int("backtest.folds",
                             [](TrainConfig& c) -> std::int64_t& { return c.backtest.folds; }));
    f.push_back(choice<BacktestMode>(
        "backtest.mode", [](TrainConfig& c) -> BacktestMode& { return c.backtest.mode; },
        {BacktestMode::Scratch, BacktestMode::Refit}));
    f.push_back(non_negative_int("backtest.refit_epochs", [](TrainConfig& c) -> std::int64_t& {
      return c.backtest.refit_epochs;
    }));
    return f;
  }();
  return table;
}

const std::vector<std::string>& section_order() {
  static const std::vector<std::string> order = {"data",     "windows",    "split",  "model",
                                                 "training", "checkpoint", "output", "backtest"};
  return order;
}

const Field* find_field(const std::string& key) {
  for (const Field& f : fields()) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

bool is_section(const std::string& prefix) {
  if (prefix.empty()) return true;
  for (const Field& f : fields()) {
    if (f.key.size() > prefix.size() && f.key.compare(0, prefix.size(), prefix) == 0 &&
        f.key[prefix.size()] == '.') {
      return true;
    }
  }
  return false;
}

std::vector<std::string> children(const std::string& prefix) {
  std::vector<std::string> out;
  if (prefix.empty()) return section_order();
  for (const Field& f : fields()) {
    if (f.key.size() <= prefix.size() + 1 || f.key.compare(0, prefix.size(), prefix) != 0 ||
        f.key[prefix.size()] != '.') {
      continue;
    }
    const std::string rest = f.key.substr(prefix.size() + 1);
    const std::string child = rest.substr(0, rest.find('.'));
    bool seen = false;
    for (const std::string& c : out) seen = seen || c == child;
    if (!seen) out.push_back(child);
  }
  return out;
}

std::string child_key(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace config_detail
}  // namespace tft
