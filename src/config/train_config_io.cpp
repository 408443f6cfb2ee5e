// One table of fields (dotted key, getter, setter) drives everything: the YAML reader walks
// the document and calls the setters, the writer and get_config_value call the getters, and
// set_config_value calls one setter. So keys, types and messages cannot drift apart between
// the file format and the C API's get/set.
#include "config/train_config_io.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "checkpoint/checkpoint_config_io.h"
#include "checkpoint/checkpoint_config_yaml_node.h"
#include "common/error.h"
#include "common/format.h"
#include "config/yaml_value.h"

namespace tft {

namespace {

using config_detail::as_bool;
using config_detail::as_choice;
using config_detail::as_non_negative_int;
using config_detail::as_number;
using config_detail::as_number_list;
using config_detail::as_positive_int;
using config_detail::as_string;
using config_detail::as_string_list;
using config_detail::as_uint64;
using config_detail::fail_at;
using config_detail::to_value;
using config_detail::yaml_double_list;
using config_detail::yaml_string;
using config_detail::yaml_string_list;
using config_detail::YamlLocator;
using config_detail::YamlValue;

// Where a setter is called from: the folder for relative paths.
struct SetContext {
  std::string base_dir;
};

struct Field {
  std::string key;  // dotted: "training.lr_schedule.factor"
  std::function<std::string(const TrainConfig&)> get;
  std::function<void(TrainConfig&, const YamlValue&, const std::string& key, const SetContext&)>
      set;
};

template <typename T>
using Ref = T& (*)(TrainConfig&);

template <typename T>
const T& read(Ref<T> ref, const TrainConfig& c) {
  return ref(const_cast<TrainConfig&>(c));  // ref only selects a member; nothing is written
}

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty()) return path;
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
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
      for (std::size_t e = 0; e < item.entries.size(); ++e) {
        const auto& [name, value] = item.entries[e];
        if (name == "name") {
          column.name = as_string(value, item_key + ".name");
          has_name = true;
        } else if (name == "embedding_dim") {
          column.embedding_dim = as_non_negative_int(value, item_key + ".embedding_dim");
        } else {
          fail_at(item.entry_where[e], item_key,
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

std::string unit_chunks_text(const std::map<std::string, std::int64_t>& chunks) {
  std::string out = "{";
  for (const auto& [unit, count] : chunks) {
    if (out.size() > 1) out += ", ";
    out += yaml_string(unit) + ": " + std::to_string(count);
  }
  return out + "}";
}

// The field table, in the order the writer emits keys.
const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> f;
    // data
    f.push_back(path("data.path", [](TrainConfig& c) -> std::string& { return c.data.path; }));
    f.push_back(
        string("data.format", [](TrainConfig& c) -> std::string& { return c.data.format; }));
    f.push_back(Field{
        "data.delimiter",
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
    f.push_back(choice<TimeFormat>(
        "data.time_format", [](TrainConfig& c) -> TimeFormat& { return c.data.time_format; },
        {TimeFormat::Auto, TimeFormat::Integer, TimeFormat::Iso8601}));
    f.push_back(string_list("data.group_columns", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.group_columns;
    }));
    f.push_back(string("data.target", [](TrainConfig& c) -> std::string& { return c.data.target; }));
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
        {MissingValuePolicy::Error, MissingValuePolicy::ForwardFill,
         MissingValuePolicy::DropRow}));
    f.push_back(string_list("data.na_values", [](TrainConfig& c) -> std::vector<std::string>& {
      return c.data.na_values;
    }));
    f.push_back(choice<ScalingMode>(
        "data.scaling", [](TrainConfig& c) -> ScalingMode& { return c.data.scaling; },
        {ScalingMode::PerSeries, ScalingMode::Global, ScalingMode::None}));
    f.push_back(choice<TargetScope>(
        "data.target_normalizer.scope",
        [](TrainConfig& c) -> TargetScope& { return c.data.target_normalizer.scope; },
        {TargetScope::Series, TargetScope::Encoder}));
    f.push_back(choice<TargetCenter>(
        "data.target_normalizer.center",
        [](TrainConfig& c) -> TargetCenter& { return c.data.target_normalizer.center; },
        {TargetCenter::Statistic, TargetCenter::Last}));
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
    f.push_back(Field{
        "split.validation_fraction",
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
    f.push_back(Field{
        "split.validation_steps",
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
    f.push_back(positive_int("model.lstm_layers",
                             [](TrainConfig& c) -> std::int64_t& { return c.model.lstm_layers; }));
    f.push_back(positive_int("model.decoder_layers", [](TrainConfig& c) -> std::int64_t& {
      return c.model.decoder_layers;
    }));
    f.push_back(Field{
        "model.quantiles", [](const TrainConfig& c) { return yaml_double_list(c.model.quantiles); },
        [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
          c.model.quantiles = as_number_list(v, k);
        }});
    f.push_back(Field{
        "model.unit_chunks",
        [](const TrainConfig& c) { return unit_chunks_text(c.model.unit_chunks); },
        [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
          if (v.kind != YamlValue::Kind::Map) {
            fail_at(v.where, k, "expected a mapping of unit names to chunk counts, got " +
                                    v.shown);
          }
          std::map<std::string, std::int64_t> chunks;
          for (const auto& [unit, count] : v.entries) {
            chunks[unit] = as_positive_int(count, k + "." + unit);
          }
          c.model.unit_chunks = chunks;
        }});
    f.push_back(non_negative_int("model.seasonality", [](TrainConfig& c) -> std::int64_t& {
      return c.model.seasonality;
    }));
    // training
    f.push_back(positive_int("training.epochs",
                             [](TrainConfig& c) -> std::int64_t& { return c.training.epochs; }));
    f.push_back(positive_int("training.batch_size", [](TrainConfig& c) -> std::int64_t& {
      return c.training.batch_size;
    }));
    f.push_back(number("training.learning_rate",
                       [](TrainConfig& c) -> double& { return c.training.learning_rate; }));
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
    f.push_back(number("training.lr_schedule.threshold", [](TrainConfig& c) -> double& {
      return c.training.lr_schedule.threshold;
    }));
    f.push_back(non_negative_int("training.lr_schedule.cooldown",
                                 [](TrainConfig& c) -> std::int64_t& {
                                   return c.training.lr_schedule.cooldown;
                                 }));
    f.push_back(non_negative_int(
        "training.early_stopping_patience",
        [](TrainConfig& c) -> std::int64_t& { return c.training.early_stopping_patience; }));
    f.push_back(non_negative_int(
        "training.snapshot_every_steps",
        [](TrainConfig& c) -> std::int64_t& { return c.training.snapshot_every_steps; }));
    f.push_back(Field{
        "training.seed", [](const TrainConfig& c) { return std::to_string(c.training.seed); },
        [](TrainConfig& c, const YamlValue& v, const std::string& k, const SetContext&) {
          c.training.seed = as_uint64(v, k);
        }});
    f.push_back(non_negative_int("training.threads",
                                 [](TrainConfig& c) -> std::int64_t& { return c.training.threads; }));
    f.push_back(
        string("training.device", [](TrainConfig& c) -> std::string& { return c.training.device; }));
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
    // output
    f.push_back(path("output.directory",
                     [](TrainConfig& c) -> std::string& { return c.output.directory; }));
    return f;
  }();
  return table;
}

const std::vector<std::string>& section_order() {
  static const std::vector<std::string> order = {"data",     "windows",    "split",  "model",
                                                 "training", "checkpoint", "output"};
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

// The direct children of a section, in table order: "epochs", ..., "lr_schedule", ...
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

// ---------------------------------------------------------------------------------------
// Reading

// The prefix ("file:line: ") of every key and list item of the document, by dotted key.
using WhereMap = std::map<std::string, std::string>;

void record_where(const YamlValue& v, const std::string& key, WhereMap& where) {
  if (v.kind == YamlValue::Kind::Map) {
    for (std::size_t e = 0; e < v.entries.size(); ++e) {
      const std::string child = child_key(key, v.entries[e].first);
      where[child] = v.entry_where[e];
      record_where(v.entries[e].second, child, where);
    }
  } else if (v.kind == YamlValue::Kind::Seq) {
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      const std::string child = key + "[" + std::to_string(i) + "]";
      where[child] = v.items[i].where;
      record_where(v.items[i], child, where);
    }
  }
}

// Where to point for a problem with `field`: its own line, else the nearest enclosing key's.
std::string where_of(const WhereMap& where, std::string field, const std::string& fallback) {
  while (!field.empty()) {
    const auto it = where.find(field);
    if (it != where.end()) return it->second;
    const std::size_t cut = field.find_last_of(".[");
    if (cut == std::string::npos) break;
    field = field.substr(0, cut);
  }
  return fallback;
}

// Applies a mapping to the section `prefix` ("" for the root, whose `checkpoint` entry the
// caller handles). Unknown keys name the section and list its keys.
void apply_section(TrainConfig& config, const YamlValue& map, const std::string& prefix,
                   const SetContext& ctx) {
  const std::string label = prefix.empty() ? "config" : prefix;
  if (map.kind != YamlValue::Kind::Map) {
    fail_at(map.where, label, "expected a mapping, got " + map.shown);
  }
  // A split given in the file replaces the default one: clear both keys first, so giving
  // one key means exactly that key (and giving both is reported by validate()).
  if (prefix == "split") {
    for (const auto& entry : map.entries) {
      if (entry.first == "validation_fraction" || entry.first == "validation_steps") {
        config.split.validation_fraction.reset();
        config.split.validation_steps.reset();
      }
    }
  }
  for (std::size_t e = 0; e < map.entries.size(); ++e) {
    const auto& [name, value] = map.entries[e];
    const std::string key = child_key(prefix, name);
    if (key == "checkpoint") continue;  // read last, with the model's unit names
    if (const Field* field = find_field(key)) {
      if (prefix == "split") {
        // The setter clears the other key (set_config_value's rule); within one mapping keep
        // what an earlier entry set, so giving both is reported by validate().
        const SplitConfig before = config.split;
        field->set(config, value, key, ctx);
        if (name == "validation_fraction") config.split.validation_steps = before.validation_steps;
        if (name == "validation_steps") {
          config.split.validation_fraction = before.validation_fraction;
        }
      } else {
        field->set(config, value, key, ctx);
      }
    } else if (is_section(key)) {
      apply_section(config, value, key, ctx);
    } else {
      fail_at(map.entry_where[e], label,
              "unknown key '" + name + "' (expected one of: " + join(children(prefix)) + ")");
    }
  }
}

// Removes a leading "line N: " (the checkpoint reader's location inside a one-value text).
std::string strip_line_prefix(const std::string& message) {
  if (message.rfind("line ", 0) != 0) return message;
  const std::size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

TrainConfig load(const std::string& text, const std::string& context,
                 const std::string& base_dir) {
  const YamlLocator loc{context, true};
  const std::string file_where = context.empty() ? "" : context + ": ";
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(loc.at(e.mark) + "invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file_where + "invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    const std::string got = root.IsNull() ? "an empty document"
                                          : to_value(root, loc, "", file_where).shown;
    throw ConfigError(file_where + "expected a mapping of sections (" + join(section_order()) +
                      "), got " + got);
  }
  const YamlValue doc = to_value(root, loc, "", file_where);
  WhereMap where;
  record_where(doc, "", where);

  TrainConfig config;
  config.base_dir = base_dir;
  const SetContext ctx{base_dir};
  apply_section(config, doc, "", ctx);
  config.data.path = resolve_path(config.data.path, base_dir);
  config.output.directory = resolve_path(config.output.directory, base_dir);

  const YAML::Node& const_root = root;  // const operator[] never inserts
  if (const_root["checkpoint"]) {
    const UnitNames units = unit_names_for(config.model);
    config.checkpoint =
        checkpoint_config_from_yaml_node(const_root["checkpoint"], context, &units);
  }

  if (const std::optional<ConfigProblem> p = config.find_problem()) {
    throw ConfigError(where_of(where, p->field, file_where) + p->message);
  }
  return config;
}

// ---------------------------------------------------------------------------------------
// Writing

// A one-line YAML value of the checkpoint section's YAML node (its writer's output).
std::string flow_text(const YAML::Node& node) {
  if (node.IsSequence()) {
    std::string out = "[";
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (i > 0) out += ", ";
      out += flow_text(node[i]);
    }
    return out + "]";
  }
  if (node.IsMap()) {
    std::string out = "{";
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (out.size() > 1) out += ", ";
      out += it->first.Scalar() + ": " + flow_text(it->second);
    }
    return out + "}";
  }
  return node.Scalar();
}

YAML::Node checkpoint_node(const CheckpointConfig& checkpoint) {
  return YAML::Load(checkpoint_config_to_yaml(checkpoint));
}

// The section `prefix` as a flow mapping.
std::string section_text(const TrainConfig& config, const std::string& prefix) {
  if (prefix == "checkpoint") return flow_text(checkpoint_node(config.checkpoint));
  std::string out = "{";
  for (const std::string& child : children(prefix)) {
    const std::string key = child_key(prefix, child);
    if (out.size() > 1) out += ", ";
    const Field* field = find_field(key);
    out += child + ": " + (field != nullptr ? field->get(config) : section_text(config, key));
  }
  return out + "}";
}

void write_section(const TrainConfig& config, const std::string& prefix, int indent,
                   std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const std::string& child : children(prefix)) {
    const std::string key = child_key(prefix, child);
    if (const Field* field = find_field(key)) {
      const std::string value = field->get(config);
      if (prefix == "split" && value == "null") continue;  // the key that is not in use
      out += pad + child + ": " + value + "\n";
    } else {
      out += pad + child + ":\n";
      write_section(config, key, indent + 2, out);
    }
  }
}

[[noreturn]] void unknown_key(const std::string& dotted_key) {
  // Name the deepest section that exists, and its keys.
  std::string prefix = dotted_key;
  while (true) {
    const std::size_t cut = prefix.rfind('.');
    prefix = cut == std::string::npos ? "" : prefix.substr(0, cut);
    if (is_section(prefix)) break;
  }
  if (prefix.empty()) {
    throw ConfigError("unknown key '" + dotted_key + "' (expected a key under one of: " +
                      join(section_order()) + ")");
  }
  throw ConfigError(prefix + ": unknown key '" + dotted_key.substr(prefix.size() + 1) +
                    "' (expected one of: " + join(children(prefix)) + ")");
}

}  // namespace

TrainConfig load_train_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError("cannot read config file '" + path + "': " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError("cannot read config file '" + path + "': read failed");
  std::error_code ec;
  std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
  if (ec) folder = std::filesystem::path(path).parent_path();
  return load(text.str(), path, folder.lexically_normal().string());
}

TrainConfig load_train_config_string(const std::string& text, const std::string& base_dir) {
  return load(text, "", base_dir);
}

std::string train_config_to_yaml(const TrainConfig& config) {
  std::string out;
  for (const std::string& section : section_order()) {
    out += section + ":\n";
    if (section == "checkpoint") {
      std::istringstream lines(checkpoint_config_to_yaml(config.checkpoint));
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) out += "  " + line + "\n";
      }
    } else {
      write_section(config, section, 2, out);
    }
  }
  return out;
}

std::string get_config_value(const TrainConfig& config, const std::string& dotted_key) {
  if (const Field* field = find_field(dotted_key)) return field->get(config);
  const std::string chunks_prefix = "model.unit_chunks.";
  if (dotted_key.rfind(chunks_prefix, 0) == 0) {
    const std::string unit = dotted_key.substr(chunks_prefix.size());
    const auto it = config.model.unit_chunks.find(unit);
    if (it == config.model.unit_chunks.end()) {
      throw ConfigError(dotted_key + ": no entry for unit '" + unit +
                        "' (the model uses its default chunk count)");
    }
    return std::to_string(it->second);
  }
  if (dotted_key == "checkpoint" || is_section(dotted_key)) {
    if (dotted_key.empty()) unknown_key(dotted_key);
    return section_text(config, dotted_key);
  }
  if (dotted_key.rfind("checkpoint.", 0) == 0) {
    const YAML::Node node = checkpoint_node(config.checkpoint);
    const std::string key = dotted_key.substr(std::string("checkpoint.").size());
    // The writer leaves the default float32 out (checkpoint_config_io.h); it is still a key.
    if (key == "boundary_dtype") return boundary_dtype_name(config.checkpoint.boundary_dtype);
    if (!node[key]) {
      std::vector<std::string> keys;
      for (auto it = node.begin(); it != node.end(); ++it) keys.push_back(it->first.Scalar());
      throw ConfigError(dotted_key + ": no such key for strategy '" +
                        config.checkpoint.strategy_name() + "' (keys: " + join(keys) + ")");
    }
    return flow_text(node[key]);
  }
  unknown_key(dotted_key);
}

void set_config_value(TrainConfig& config, const std::string& dotted_key,
                      const std::string& value_text) {
  YAML::Node node;
  try {
    node = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(dotted_key + ": invalid YAML value: " + e.msg);
  }
  const YamlLocator loc{"", false};
  const YamlValue value = to_value(node, loc, dotted_key, "");
  const SetContext ctx{config.base_dir};
  TrainConfig updated = config;  // unchanged on error

  const std::string chunks_prefix = "model.unit_chunks.";
  const std::string checkpoint_prefix = "checkpoint.";
  if (const Field* field = find_field(dotted_key)) {
    field->set(updated, value, dotted_key, ctx);
  } else if (dotted_key.rfind(chunks_prefix, 0) == 0 &&
             dotted_key.size() > chunks_prefix.size()) {
    const std::string unit = dotted_key.substr(chunks_prefix.size());
    if (value.kind == YamlValue::Kind::Null) {
      updated.model.unit_chunks.erase(unit);
    } else {
      updated.model.unit_chunks[unit] = as_positive_int(value, dotted_key);
    }
  } else if (dotted_key == "checkpoint" || dotted_key.rfind(checkpoint_prefix, 0) == 0) {
    YAML::Node section;
    if (dotted_key == "checkpoint") {
      section = node;
    } else {
      section = checkpoint_node(config.checkpoint);
      const std::string key = dotted_key.substr(checkpoint_prefix.size());
      if (key == "strategy") {
        // The old strategy's keys would not fit the new one.
        for (const char* k : {"interval", "layers", "num_layers", "memory_fraction"}) {
          section.remove(k);
        }
      }
      section[key] = node;
    }
    const UnitNames units = unit_names_for(updated.model);
    try {
      updated.checkpoint = checkpoint_config_from_yaml_node(section, "", &units);
    } catch (const ConfigError& e) {
      throw ConfigError(strip_line_prefix(e.what()));
    }
  } else if (!dotted_key.empty() && is_section(dotted_key)) {
    apply_section(updated, value, dotted_key, ctx);
  } else {
    unknown_key(dotted_key);
  }
  config = std::move(updated);
}

}  // namespace tft
