// CheckpointConfig <-> JSON: a JSON value becomes the neutral tree that build() reads
// (checkpoint_config_document.h).
#include "checkpoint/checkpoint_config_json.h"

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_config_document.h"
#include "common/error.h"

namespace tft {

namespace {

using checkpoint_detail::build;
using checkpoint_detail::Document;
using checkpoint_detail::Entry;
using checkpoint_detail::fail;
using checkpoint_detail::Value;

Value json_value(const nlohmann::json& j) {
  Value v;
  v.shown = j.dump();
  if (v.shown.size() > 60) v.shown = v.shown.substr(0, 60) + "...";
  switch (j.type()) {
    case nlohmann::json::value_t::null: v.kind = Value::Kind::Null; break;
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
  if (config.memory_budget) j["memory_budget"] = memory_budget_text(*config.memory_budget);
  if (config.chunk_every_unit) j["chunk_every_unit"] = true;
  return j;
}

CheckpointConfig checkpoint_config_from_json(const nlohmann::json& value, const UnitNames* units) {
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
