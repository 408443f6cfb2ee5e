// Typed YAML values for the training config reader (internal to src/config).
//
// A YAML node becomes a YamlValue: its type resolved by the YAML 1.2 core schema (so `yes` is
// a string, `-1` a negative integer and a quoted "2" a string, as in the checkpoint reader),
// plus the message prefix that locates it ("sp500.yaml:12: "). The as_* readers check the
// type a key wants and throw ConfigError("<where><key>: expected <type>, got <value>").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/format.h"  // show_string
#include "common/yaml_locator.h"
#include "common/yaml_scalar.h"

namespace tft {
namespace config_detail {

struct YamlEntry;

// A plain scalar's fields come from YamlScalar (common/yaml_scalar.h); Seq and Map are this
// reader's own kinds.
struct YamlValue : YamlScalar {
  std::string where;               // "file:12: ", "line 12: " or ""
  std::vector<YamlValue> items;    // Seq
  std::vector<YamlEntry> entries;  // Map (keys in file order)
};

// One key of a mapping. A struct of its own, declared before YamlValue and defined after it:
// a std::pair<std::string, YamlValue> member would instantiate the pair while YamlValue is
// still incomplete, which clang rejects in C++20 (libstdc++'s constexpr vector destructor).
struct YamlEntry {
  std::string key;
  std::string where;  // where the key is: "file:12: "
  YamlValue value;
};

using ::tft::YamlLocator;  // common/yaml_locator.h

// Converts a node; duplicate keys in a mapping are an error naming `path`.
YamlValue to_value(const YAML::Node& node, const YamlLocator& loc, const std::string& path,
                   const std::string& fallback_where);

[[noreturn]] void fail_at(const std::string& where, const std::string& key,
                          const std::string& what);

// Readers: `key` is the dotted key named in messages.
std::int64_t as_positive_int(const YamlValue& v, const std::string& key);
std::int64_t as_non_negative_int(const YamlValue& v, const std::string& key);
std::uint64_t as_uint64(const YamlValue& v, const std::string& key);
double as_number(const YamlValue& v, const std::string& key);
bool as_bool(const YamlValue& v, const std::string& key);
std::string as_string(const YamlValue& v, const std::string& key);
std::vector<std::string> as_string_list(const YamlValue& v, const std::string& key);
std::vector<double> as_number_list(const YamlValue& v, const std::string& key);
// One of `names`; the message lists them.
std::string as_choice(const YamlValue& v, const std::string& key,
                      const std::vector<std::string>& names);

// Emitting: text that reads back to the same value and type (yaml_double: common/yaml_scalar.h).
std::string yaml_string(const std::string& text);  // plain when safe, else double-quoted
std::string yaml_string_list(const std::vector<std::string>& items);  // [a, "b c"]
std::string yaml_double_list(const std::vector<double>& items);

}  // namespace config_detail
}  // namespace tft
