// YAML and JSON share one reader: each format is first turned into a small neutral tree
// (Document / Entry / Value, every value already typed by that format's own rules and
// carrying the message prefix that locates it), and build() applies the schema once. So the
// two formats cannot drift apart in keys, defaults or messages.
#include "checkpoint/checkpoint_config_io.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <regex>
#include <utility>

#include "checkpoint/checkpoint_config_json.h"
#include "checkpoint/checkpoint_config_yaml_node.h"
#include "common/error.h"
#include "common/format.h"
#include "common/yaml_scalar.h"

namespace tft {

namespace {

// ---------------------------------------------------------------------------------------
// Schema

const std::vector<std::string>& schema_keys() {
  static const std::vector<std::string> keys = {
      "strategy",       "interval",           "layers",
      "num_layers",     "memory_fraction",    "checkpoint_attention",
      "checkpoint_ffn", "min_checkpoint_interval", "boundary_dtype"};
  return keys;
}

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"none", "uniform", "selective", "dynamic"};
  return names;
}

// The strategy a strategy-specific key belongs to; "" for keys every strategy accepts.
std::string owner_of(const std::string& key) {
  if (key == "interval") return "uniform";
  if (key == "layers") return "selective";
  if (key == "num_layers" || key == "memory_fraction") return "dynamic";
  return "";
}

// ---------------------------------------------------------------------------------------
// Neutral tree

// A plain scalar's fields come from YamlScalar (common/yaml_scalar.h); Seq, Map and Other
// are this reader's own kinds.
struct Value : YamlScalar {
  std::string where;         // message prefix locating the value: "line 3: " or ""
  std::vector<Value> items;  // Seq
};

struct Entry {
  std::string key;
  std::string where;  // locates the key
  Value value;
};

struct Document {
  std::string where;  // locates the mapping itself
  std::vector<Entry> entries;
};

[[noreturn]] void fail(const std::string& where, const std::string& path,
                       const std::string& what) {
  throw ConfigError(where + path + ": " + what);
}

std::size_t get_size(const Value& v, const std::string& path) {
  if (v.kind == Value::Kind::UInt &&
      v.uint <= static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max())) {
    return static_cast<std::size_t>(v.uint);
  }
  if (v.kind == Value::Kind::UInt || v.kind == Value::Kind::BigInt) {
    fail(v.where, path, "integer " + v.shown + " is too large");
  }
  fail(v.where, path, "expected a non-negative integer, got " + v.shown);
}

bool get_bool(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::Bool) fail(v.where, path, "expected true or false, got " + v.shown);
  return v.boolean;
}

double get_number(const Value& v, const std::string& path) {
  switch (v.kind) {
    case Value::Kind::UInt:
    case Value::Kind::NegInt:
    case Value::Kind::BigInt:
    case Value::Kind::Float:
      return v.number;
    default:
      fail(v.where, path, "expected a number, got " + v.shown);
  }
}

BoundaryDtype get_boundary_dtype(const Value& v, const std::string& path) {
  const std::string expected = std::string("expected one of: ") + boundary_dtype_choices();
  if (v.kind != Value::Kind::String) fail(v.where, path, expected + ", got " + v.shown);
  const std::optional<BoundaryDtype> dtype = parse_boundary_dtype(v.text);
  if (!dtype) fail(v.where, path, "unknown boundary dtype " + v.shown + " (" + expected + ")");
  return *dtype;
}

std::vector<std::size_t> get_layers(const Value& v, const std::string& path,
                                    const UnitNames* units) {
  if (v.kind != Value::Kind::Seq) {
    fail(v.where, path, "expected a sequence of unit indices or names, got " + v.shown);
  }
  std::vector<std::size_t> layers;
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    const Value& item = v.items[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (item.kind == Value::Kind::String) {
      if (units == nullptr) {
        fail(item.where, item_path,
             "'" + item.text +
                 "' is a unit name, and names need the model's unit list (give an index here)");
      }
      std::size_t index = 0;
      while (index < units->size() && (*units)[index] != item.text) ++index;
      if (index == units->size()) {
        fail(item.where, item_path,
             "unknown unit '" + item.text + "' (expected one of: " + join(*units) + ")");
      }
      layers.push_back(index);
    } else if (item.kind == Value::Kind::UInt || item.kind == Value::Kind::BigInt) {
      layers.push_back(get_size(item, item_path));
    } else {
      fail(item.where, item_path,
           "expected a non-negative integer or a unit name, got " + item.shown);
    }
  }
  return layers;
}

// Applies the schema to a document of either format.
CheckpointConfig build(const Document& doc, const UnitNames* units) {
  const std::vector<std::string>& keys = schema_keys();
  std::vector<const Entry*> found(keys.size(), nullptr);
  for (const Entry& e : doc.entries) {
    std::size_t k = 0;
    while (k < keys.size() && keys[k] != e.key) ++k;
    if (k == keys.size()) {
      fail(e.where, "checkpoint",
           "unknown key '" + e.key + "' (expected one of: " + join(keys) + ")");
    }
    found[k] = &e;  // duplicates were rejected by the format reader
  }
  auto entry = [&](const std::string& key) -> const Entry* {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (keys[k] == key) return found[k];
    }
    return nullptr;
  };

  std::string strategy = "none";  // a missing strategy means the default, none()
  if (const Entry* e = entry("strategy")) {
    const Value& v = e->value;
    if (v.kind != Value::Kind::String) {
      fail(v.where, "checkpoint.strategy",
           "expected a strategy name (one of: " + join(strategy_names()) + "), got " + v.shown);
    }
    bool known = false;
    for (const std::string& name : strategy_names()) known = known || name == v.text;
    if (!known) {
      fail(v.where, "checkpoint.strategy",
           "unknown strategy '" + v.text + "' (expected one of: " + join(strategy_names()) +
               ")");
    }
    strategy = v.text;
  }

  // Keys of another strategy would be ignored silently; say so instead. Then the required
  // keys of this one.
  for (const Entry& e : doc.entries) {
    const std::string owner = owner_of(e.key);
    if (!owner.empty() && owner != strategy) {
      fail(e.where, "checkpoint." + e.key,
           "not used by strategy '" + strategy + "' (it belongs to '" + owner + "')");
    }
  }
  for (const std::string& key : keys) {
    if (owner_of(key) == strategy && entry(key) == nullptr) {
      fail(doc.where, "checkpoint", "strategy '" + strategy + "' requires key '" + key + "'");
    }
  }

  CheckpointConfig config;
  if (strategy == "uniform") {
    config = CheckpointConfig::uniform(get_size(entry("interval")->value, "checkpoint.interval"));
  } else if (strategy == "selective") {
    config = CheckpointConfig::selective(
        get_layers(entry("layers")->value, "checkpoint.layers", units));
  } else if (strategy == "dynamic") {
    // Not CheckpointConfig::dynamic(): its error could not carry the line; the checks below
    // (find_problem) apply the same rules and know where the key is.
    DynamicStrategy d;
    d.num_layers = get_size(entry("num_layers")->value, "checkpoint.num_layers");
    d.memory_fraction =
        get_number(entry("memory_fraction")->value, "checkpoint.memory_fraction");
    config.strategy = d;
    config.checkpoint_attention = true;  // the strategy constructors' defaults
    config.checkpoint_ffn = true;
  }
  if (const Entry* e = entry("checkpoint_attention")) {
    config.checkpoint_attention = get_bool(e->value, "checkpoint.checkpoint_attention");
  }
  if (const Entry* e = entry("checkpoint_ffn")) {
    config.checkpoint_ffn = get_bool(e->value, "checkpoint.checkpoint_ffn");
  }
  if (const Entry* e = entry("min_checkpoint_interval")) {
    config.min_checkpoint_interval =
        get_size(e->value, "checkpoint.min_checkpoint_interval");
  }
  if (const Entry* e = entry("boundary_dtype")) {
    config.boundary_dtype = get_boundary_dtype(e->value, "checkpoint.boundary_dtype");
  }

  const std::optional<CheckpointProblem> problem =
      units != nullptr ? config.find_problem(units->size()) : config.find_problem();
  if (problem) {
    const Entry* e = entry(problem->field);
    throw ConfigError((e != nullptr ? e->where : doc.where) + problem->message);
  }
  return config;
}

// ---------------------------------------------------------------------------------------
// YAML

// Message prefixes: "line 3: " alone, "train.yaml:3: " with a context.
struct YamlLocator {
  std::string context;
  std::string at(const YAML::Mark& mark) const {
    if (mark.line < 0) return context.empty() ? "" : context + ": ";
    const std::string line = std::to_string(mark.line + 1);
    return context.empty() ? "line " + line + ": " : context + ":" + line + ": ";
  }
};

Value yaml_value(const YAML::Node& node, const YamlLocator& loc,
                 const std::string& fallback_where) {
  Value v;
  // yaml-cpp gives an empty value (`interval:`) no useful mark; point at its key instead.
  v.where = node.IsNull() || node.Mark().line < 0 ? fallback_where : loc.at(node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      v.kind = Value::Kind::Seq;
      v.shown = "a sequence";
      for (const YAML::Node& item : node) v.items.push_back(yaml_value(item, loc, v.where));
      break;
    case YAML::NodeType::Map:
      v.kind = Value::Kind::Map;
      v.shown = "a mapping";
      break;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      // "!" marks a quoted scalar: "2" is a string, not a number.
      if (tag == "!" || tag == "tag:yaml.org,2002:str") {
        v.kind = Value::Kind::String;
        v.text = node.Scalar();
        v.shown = show_string(v.text);
      } else {
        static_cast<YamlScalar&>(v) = resolve_plain_scalar(node.Scalar());
        // No key of this schema takes a negative integer, and every negative one is refused
        // alike ("expected a non-negative integer, got -5"), beyond int64's range too.
        if (is_negative_big_int(v)) v.kind = Value::Kind::NegInt;
      }
      break;
    }
    default:
      v.kind = Value::Kind::Null;
      v.shown = "null";
      break;
  }
  return v;
}

// ---------------------------------------------------------------------------------------
// JSON

Value json_value(const nlohmann::json& j) {
  Value v;
  v.shown = j.dump();
  if (v.shown.size() > 60) v.shown = v.shown.substr(0, 60) + "...";
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      v.kind = Value::Kind::Null;
      break;
    case nlohmann::json::value_t::boolean:
      v.kind = Value::Kind::Bool;
      v.boolean = j.get<bool>();
      break;
    case nlohmann::json::value_t::number_unsigned:
      v.kind = Value::Kind::UInt;
      v.uint = j.get<std::uint64_t>();
      v.number = static_cast<double>(v.uint);
      break;
    case nlohmann::json::value_t::number_integer: {
      const std::int64_t n = j.get<std::int64_t>();
      v.kind = n < 0 ? Value::Kind::NegInt : Value::Kind::UInt;
      v.uint = n < 0 ? 0 : static_cast<std::uint64_t>(n);
      v.number = static_cast<double>(n);
      break;
    }
    case nlohmann::json::value_t::number_float:
      v.kind = Value::Kind::Float;
      v.number = j.get<double>();
      break;
    case nlohmann::json::value_t::string:
      v.kind = Value::Kind::String;
      v.text = j.get<std::string>();
      break;
    case nlohmann::json::value_t::array:
      v.kind = Value::Kind::Seq;
      v.shown = "an array";
      for (const nlohmann::json& item : j) v.items.push_back(json_value(item));
      break;
    case nlohmann::json::value_t::object:
      v.kind = Value::Kind::Map;
      v.shown = "an object";
      break;
    default:
      v.kind = Value::Kind::Other;
      v.shown = "a binary value";
      break;
  }
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// YAML API

std::string checkpoint_config_to_yaml(const CheckpointConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "strategy" << YAML::Value << config.strategy_name();
  if (const auto* u = std::get_if<UniformStrategy>(&config.strategy)) {
    out << YAML::Key << "interval" << YAML::Value << static_cast<unsigned long long>(u->interval);
  } else if (const auto* s = std::get_if<SelectiveStrategy>(&config.strategy)) {
    out << YAML::Key << "layers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (std::size_t index : s->layers) out << static_cast<unsigned long long>(index);
    out << YAML::EndSeq;
  } else if (const auto* d = std::get_if<DynamicStrategy>(&config.strategy)) {
    out << YAML::Key << "num_layers" << YAML::Value
        << static_cast<unsigned long long>(d->num_layers);
    out << YAML::Key << "memory_fraction" << YAML::Value << yaml_double(d->memory_fraction);
  }
  out << YAML::Key << "checkpoint_attention" << YAML::Value << config.checkpoint_attention;
  out << YAML::Key << "checkpoint_ffn" << YAML::Value << config.checkpoint_ffn;
  out << YAML::Key << "min_checkpoint_interval" << YAML::Value
      << static_cast<unsigned long long>(config.min_checkpoint_interval);
  if (config.boundary_dtype != BoundaryDtype::kFloat32) {  // see the header
    out << YAML::Key << "boundary_dtype" << YAML::Value
        << boundary_dtype_name(config.boundary_dtype);
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

CheckpointConfig checkpoint_config_from_yaml_node(const YAML::Node& node,
                                                  const std::string& context,
                                                  const UnitNames* units) {
  const YamlLocator loc{context};
  if (!node.IsDefined()) {  // e.g. root["checkpoint"] of a file without that section
    fail(loc.at(YAML::Mark::null_mark()), "checkpoint", "expected a mapping, got nothing");
  }
  Document doc;
  doc.where = loc.at(node.Mark());
  if (!node.IsMap()) {
    const Value v = yaml_value(node, loc, doc.where);
    fail(doc.where, "checkpoint", "expected a mapping, got " + v.shown);
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    // By value: it-> yields a temporary proxy, so a reference to its member would dangle.
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    const std::string where = loc.at(key.Mark());
    if (!key.IsScalar()) {
      fail(where, "checkpoint", "expected a key name, got " + yaml_value(key, loc, where).shown);
    }
    for (const Entry& earlier : doc.entries) {
      if (earlier.key == key.Scalar()) {
        // yaml-cpp keeps both; which one wins would be an accident.
        fail(where, "checkpoint", "duplicate key '" + key.Scalar() + "'");
      }
    }
    doc.entries.push_back(Entry{key.Scalar(), where, yaml_value(value, loc, where)});
  }
  return build(doc, units);
}

CheckpointConfig checkpoint_config_from_yaml(const std::string& text, const UnitNames* units) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(YamlLocator{}.at(e.mark) + "checkpoint: invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError("checkpoint: invalid YAML: " + e.msg);
  }
  if (node.IsNull() && node.Mark().line < 0) {
    throw ConfigError("checkpoint: expected a mapping, got an empty document");
  }
  return checkpoint_config_from_yaml_node(node, "", units);
}

// ---------------------------------------------------------------------------------------
// JSON API

nlohmann::json checkpoint_config_to_json(const CheckpointConfig& config) {
  nlohmann::json j = nlohmann::json::object();
  j["strategy"] = config.strategy_name();
  if (const auto* u = std::get_if<UniformStrategy>(&config.strategy)) {
    j["interval"] = u->interval;
  } else if (const auto* s = std::get_if<SelectiveStrategy>(&config.strategy)) {
    j["layers"] = s->layers;
  } else if (const auto* d = std::get_if<DynamicStrategy>(&config.strategy)) {
    j["num_layers"] = d->num_layers;
    j["memory_fraction"] = d->memory_fraction;
  }
  j["checkpoint_attention"] = config.checkpoint_attention;
  j["checkpoint_ffn"] = config.checkpoint_ffn;
  j["min_checkpoint_interval"] = config.min_checkpoint_interval;
  if (config.boundary_dtype != BoundaryDtype::kFloat32) {  // see the header
    j["boundary_dtype"] = boundary_dtype_name(config.boundary_dtype);
  }
  return j;
}

CheckpointConfig checkpoint_config_from_json(const nlohmann::json& value,
                                             const UnitNames* units) {
  if (!value.is_object()) {
    fail("", "checkpoint", "expected an object, got " + json_value(value).shown);
  }
  Document doc;
  for (auto it = value.begin(); it != value.end(); ++it) {
    doc.entries.push_back(Entry{it.key(), "", json_value(it.value())});
  }
  return build(doc, units);
}

std::string checkpoint_config_to_json_string(const CheckpointConfig& config, int indent) {
  return checkpoint_config_to_json(config).dump(indent);
}

CheckpointConfig checkpoint_config_from_json_string(const std::string& text,
                                                    const UnitNames* units) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // Every nlohmann error, not only parse_error: a number too large for a double ("1e380")
    // is an out_of_range (406) thrown by the parser, and must not escape as a non-tft error.
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep "parse error at line...".
    std::string what = e.what();
    const std::size_t tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    throw ConfigError("checkpoint: invalid JSON: " + what);
  }
  return checkpoint_config_from_json(value, units);
}

}  // namespace tft
