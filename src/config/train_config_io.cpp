// One table of fields (config_fields.h: dotted key, getter, setter) drives everything: the
// YAML reader walks the document and calls the setters, the writer and get_config_value call
// the getters, and set_config_value calls one setter. So keys, types and messages cannot drift
// apart between the file format and the C API's get/set.
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
#include "config/config_fields.h"
#include "config/yaml_value.h"

namespace tft {

namespace {

using config_detail::as_positive_int;
using config_detail::child_key;
using config_detail::children;
using config_detail::fail_at;
using config_detail::Field;
using config_detail::find_field;
using config_detail::is_section;
using config_detail::resolve_path;
using config_detail::section_order;
using config_detail::SetContext;
using config_detail::to_value;
using config_detail::YamlLocator;
using config_detail::YamlValue;

// ---------------------------------------------------------------------------------------
// Reading

// The prefix ("file:line: ") of every key and list item of the document, by dotted key.
using WhereMap = std::map<std::string, std::string>;

void record_where(const YamlValue& v, const std::string& key, WhereMap& where) {
  if (v.kind == YamlValue::Kind::Map) {
    for (const auto& entry : v.entries) {
      const std::string child = child_key(key, entry.key);
      where[child] = entry.where;
      record_where(entry.value, child, where);
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
      if (entry.key == "validation_fraction" || entry.key == "validation_steps") {
        config.split.validation_fraction.reset();
        config.split.validation_steps.reset();
      }
    }
  }
  for (const auto& entry : map.entries) {
    const std::string& name = entry.key;
    const YamlValue& value = entry.value;
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
      config.given_keys.insert(key);
    } else if (is_section(key)) {
      apply_section(config, value, key, ctx);
    } else {
      fail_at(entry.where, label,
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

TrainConfig load(const std::string& text, const std::string& context, const std::string& base_dir) {
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
    const std::string got =
        root.IsNull() ? "an empty document" : to_value(root, loc, "", file_where).shown;
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
    config.checkpoint = checkpoint_config_from_yaml_node(const_root["checkpoint"], context, &units);
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
    throw ConfigError("unknown key '" + dotted_key +
                      "' (expected a key under one of: " + join(section_order()) + ")");
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
    // Likewise a config without a budget (set null removes one).
    if (key == "memory_budget" && !config.checkpoint.memory_budget) return "null";
    if (key == "chunk_every_unit") return config.checkpoint.chunk_every_unit ? "true" : "false";
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
  updated.given_keys.insert(dotted_key);
  if (const Field* field = find_field(dotted_key)) {
    field->set(updated, value, dotted_key, ctx);
  } else if (dotted_key.rfind(chunks_prefix, 0) == 0 && dotted_key.size() > chunks_prefix.size()) {
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
      if (key == "memory_budget" && !config.checkpoint.memory_budget) {
        // A new budget takes the sub-layer defaults a budget has in a file (true), not the
        // written-out ones of strategy none (false), as a strategy change would.
        section.remove("checkpoint_attention");
        section.remove("checkpoint_ffn");
      }
      if (key == "memory_budget" && node.IsNull()) {
        section.remove(key);  // null: no budget
      } else {
        section[key] = node;
      }
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
