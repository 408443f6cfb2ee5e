// The checkpoint section's neutral tree and schema (internal to src/checkpoint).
//
// YAML and JSON share one reader: each format is first turned into a small neutral tree
// (Document / Entry / Value, every value already typed by that format's own rules and
// carrying the message prefix that locates it), and build() applies the schema once. So the
// two formats cannot drift apart in keys, defaults or messages. The YAML side is in
// checkpoint_config_io.cpp, the JSON side in checkpoint_config_json.cpp.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/checkpoint_config_io.h"
#include "common/yaml_scalar.h"

namespace tft {
namespace checkpoint_detail {

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

// Throws ConfigError("<where><path>: <what>").
[[noreturn]] void fail(const std::string& where, const std::string& path, const std::string& what);

// Applies the schema to a document of either format (checkpoint_config_io.h has the rules).
CheckpointConfig build(const Document& doc, const UnitNames* units);

}  // namespace checkpoint_detail
}  // namespace tft
