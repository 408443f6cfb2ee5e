// CheckpointConfig <-> YAML: a YAML node becomes the neutral tree that build() reads
// (checkpoint_config_document.h).
#include "checkpoint/checkpoint_config_io.h"

#include <string>

#include <yaml-cpp/yaml.h>

#include "checkpoint/checkpoint_config_document.h"
#include "checkpoint/checkpoint_config_yaml_node.h"
#include "common/error.h"
#include "common/format.h"
#include "common/yaml_locator.h"
#include "common/yaml_scalar.h"

namespace tft {

namespace {

using checkpoint_detail::build;
using checkpoint_detail::Document;
using checkpoint_detail::Entry;
using checkpoint_detail::fail;
using checkpoint_detail::Value;

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

}  // namespace

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
  if (config.memory_budget) {
    out << YAML::Key << "memory_budget" << YAML::Value << memory_budget_text(*config.memory_budget);
  }
  if (config.chunk_every_unit) out << YAML::Key << "chunk_every_unit" << YAML::Value << true;
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

}  // namespace tft
