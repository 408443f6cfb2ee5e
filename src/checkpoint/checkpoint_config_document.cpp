#include "checkpoint/checkpoint_config_document.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <variant>

#include "common/error.h"
#include "common/format.h"

namespace tft {
namespace checkpoint_detail {

void fail(const std::string& where, const std::string& path, const std::string& what) {
  throw ConfigError(where + path + ": " + what);
}

namespace {

// ---------------------------------------------------------------------------------------
// Schema

const std::vector<std::string>& schema_keys() {
  static const std::vector<std::string> keys = {"strategy",        "interval",
                                                "layers",          "num_layers",
                                                "memory_fraction", "checkpoint_attention",
                                                "checkpoint_ffn",  "min_checkpoint_interval",
                                                "boundary_dtype",  "memory_budget",
                                                "chunk_every_unit"};
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
    case Value::Kind::Float: return v.number;
    default: fail(v.where, path, "expected a number, got " + v.shown);
  }
}

BoundaryDtype get_boundary_dtype(const Value& v, const std::string& path) {
  const std::string expected = std::string("expected one of: ") + boundary_dtype_choices();
  if (v.kind != Value::Kind::String) fail(v.where, path, expected + ", got " + v.shown);
  const std::optional<BoundaryDtype> dtype = parse_boundary_dtype(v.text);
  if (!dtype) fail(v.where, path, "unknown boundary dtype " + v.shown + " (" + expected + ")");
  return *dtype;
}

// A size text ("900MiB", "auto") or a whole number of bytes.
MemoryBudget get_memory_budget(const Value& v, const std::string& path) {
  const std::string expected = std::string("expected ") + memory_budget_forms();
  switch (v.kind) {
    case Value::Kind::String: {
      auto parsed = parse_memory_budget(v.text);
      if (auto* reason = std::get_if<std::string>(&parsed)) fail(v.where, path, *reason);
      return std::get<MemoryBudget>(parsed);
    }
    case Value::Kind::UInt:
      if (v.uint == 0) fail(v.where, path, "must be more than 0 bytes (got 0)");
      if (v.uint > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail(v.where, path, "integer " + v.shown + " is too large (at most 2^63 - 1 bytes)");
      }
      return MemoryBudget::of_bytes(static_cast<std::int64_t>(v.uint));
    case Value::Kind::BigInt:
      fail(v.where, path, "integer " + v.shown + " is too large (at most 2^63 - 1 bytes)");
    case Value::Kind::NegInt:
      fail(v.where, path, "must be more than 0 bytes (got " + v.shown + ")");
    case Value::Kind::Float:
      // 1e9 is a whole number of bytes; 2.5 or -1.0 are not.
      if (v.number >= 1.0 && v.number < std::ldexp(1.0, 63) &&
          v.number == static_cast<double>(static_cast<std::int64_t>(v.number))) {
        return MemoryBudget::of_bytes(static_cast<std::int64_t>(v.number));
      }
      if (v.number <= 0.0) fail(v.where, path, "must be more than 0 bytes (got " + v.shown + ")");
      fail(v.where, path, "not a whole number of bytes: " + v.shown + " (" + expected + ")");
    default: fail(v.where, path, expected + ", got " + v.shown);
  }
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

}  // namespace

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
           "unknown strategy '" + v.text + "' (expected one of: " + join(strategy_names()) + ")");
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
    config =
        CheckpointConfig::selective(get_layers(entry("layers")->value, "checkpoint.layers", units));
  } else if (strategy == "dynamic") {
    // Not CheckpointConfig::dynamic(): its error could not carry the line; the checks below
    // (find_problem) apply the same rules and know where the key is.
    DynamicStrategy d;
    d.num_layers = get_size(entry("num_layers")->value, "checkpoint.num_layers");
    d.memory_fraction = get_number(entry("memory_fraction")->value, "checkpoint.memory_fraction");
    config.strategy = d;
    config.checkpoint_attention = true;  // the strategy constructors' defaults
    config.checkpoint_ffn = true;
  }
  if (const Entry* e = entry("memory_budget")) {
    config.memory_budget = get_memory_budget(e->value, "checkpoint.memory_budget");
    // The planner may recompute attention units whole, as the planning strategy (dynamic)
    // does by default; find_problem refuses a budget beside any strategy but none.
    if (strategy == "none") {
      config.checkpoint_attention = true;
      config.checkpoint_ffn = true;
    }
  }
  if (const Entry* e = entry("checkpoint_attention")) {
    config.checkpoint_attention = get_bool(e->value, "checkpoint.checkpoint_attention");
  }
  if (const Entry* e = entry("checkpoint_ffn")) {
    config.checkpoint_ffn = get_bool(e->value, "checkpoint.checkpoint_ffn");
  }
  if (const Entry* e = entry("min_checkpoint_interval")) {
    config.min_checkpoint_interval = get_size(e->value, "checkpoint.min_checkpoint_interval");
  }
  if (const Entry* e = entry("boundary_dtype")) {
    config.boundary_dtype = get_boundary_dtype(e->value, "checkpoint.boundary_dtype");
  }
  if (const Entry* e = entry("chunk_every_unit")) {
    config.chunk_every_unit = get_bool(e->value, "checkpoint.chunk_every_unit");
  }

  const std::optional<CheckpointProblem> problem =
      units != nullptr ? config.find_problem(units->size()) : config.find_problem();
  if (problem) {
    const Entry* e = entry(problem->field);
    throw ConfigError((e != nullptr ? e->where : doc.where) + problem->message);
  }
  return config;
}

}  // namespace checkpoint_detail
}  // namespace tft
