#include "config/yaml_value.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

#include "common/error.h"
#include "common/format.h"

namespace tft {
namespace config_detail {

namespace {

bool is_integer(const YamlValue& v) {
  return v.kind == YamlValue::Kind::UInt || v.kind == YamlValue::Kind::NegInt ||
         v.kind == YamlValue::Kind::BigInt;
}

// A positive integer beyond int64 (for as_uint64 only BigInt reaches here as too large).
bool too_large(const YamlValue& v) {
  if (v.kind == YamlValue::Kind::UInt) {
    return v.uint > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  }
  return v.kind == YamlValue::Kind::BigInt && !is_negative_big_int(v);
}

}  // namespace

void fail_at(const std::string& where, const std::string& key, const std::string& what) {
  throw ConfigError(where + key + ": " + what);
}

YamlValue to_value(const YAML::Node& node, const YamlLocator& loc, const std::string& path,
                   const std::string& fallback_where) {
  YamlValue v;
  v.where = node.IsNull() || node.Mark().line < 0 ? fallback_where : loc.at(node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      v.kind = YamlValue::Kind::Seq;
      v.shown = "a sequence";
      std::size_t i = 0;
      for (const YAML::Node& item : node) {
        v.items.push_back(to_value(item, loc, path + "[" + std::to_string(i) + "]", v.where));
        ++i;
      }
      break;
    }
    case YAML::NodeType::Map:
      v.kind = YamlValue::Kind::Map;
      v.shown = "a mapping";
      for (auto it = node.begin(); it != node.end(); ++it) {
        const YAML::Node key = it->first;  // by value: it-> yields a temporary proxy
        const YAML::Node value = it->second;
        const std::string where = key.Mark().line < 0 ? v.where : loc.at(key.Mark());
        if (!key.IsScalar()) {
          fail_at(where, path, "expected a key name, got " + to_value(key, loc, path, where).shown);
        }
        for (const auto& earlier : v.entries) {
          if (earlier.key == key.Scalar()) {
            fail_at(where, path, "duplicate key '" + key.Scalar() + "'");
          }
        }
        const std::string child = path.empty() ? key.Scalar() : path + "." + key.Scalar();
        v.entries.push_back(YamlEntry{key.Scalar(), where, to_value(value, loc, child, where)});
      }
      break;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") {  // quoted or !!str: a string
        v.kind = YamlValue::Kind::String;
        v.text = node.Scalar();
        v.shown = show_string(v.text);
      } else {
        static_cast<YamlScalar&>(v) = resolve_plain_scalar(node.Scalar());
      }
      break;
    }
    default:
      v.kind = YamlValue::Kind::Null;
      v.shown = "null";
      break;
  }
  return v;
}

std::int64_t as_positive_int(const YamlValue& v, const std::string& key) {
  if (v.kind == YamlValue::Kind::UInt && v.uint >= 1 &&
      v.uint <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(v.uint);
  }
  if (too_large(v)) fail_at(v.where, key, "integer " + v.shown + " is too large");
  fail_at(v.where, key, "expected a positive integer, got " + v.shown);
}

std::int64_t as_non_negative_int(const YamlValue& v, const std::string& key) {
  if (v.kind == YamlValue::Kind::UInt &&
      v.uint <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(v.uint);
  }
  if (too_large(v)) fail_at(v.where, key, "integer " + v.shown + " is too large");
  fail_at(v.where, key, "expected a non-negative integer, got " + v.shown);
}

std::uint64_t as_uint64(const YamlValue& v, const std::string& key) {
  if (v.kind == YamlValue::Kind::UInt) return v.uint;
  if (too_large(v)) fail_at(v.where, key, "integer " + v.shown + " is too large");
  fail_at(v.where, key, "expected a non-negative integer, got " + v.shown);
}

double as_number(const YamlValue& v, const std::string& key) {
  if (is_integer(v) || v.kind == YamlValue::Kind::Float) return v.number;
  fail_at(v.where, key, "expected a number, got " + v.shown);
}

bool as_bool(const YamlValue& v, const std::string& key) {
  if (v.kind != YamlValue::Kind::Bool) {
    fail_at(v.where, key, "expected true or false, got " + v.shown);
  }
  return v.boolean;
}

std::string as_string(const YamlValue& v, const std::string& key) {
  if (v.kind != YamlValue::Kind::String) {
    fail_at(v.where, key, "expected a string, got " + v.shown);
  }
  return v.text;
}

std::vector<std::string> as_string_list(const YamlValue& v, const std::string& key) {
  if (v.kind != YamlValue::Kind::Seq) {
    fail_at(v.where, key, "expected a sequence of strings, got " + v.shown);
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    out.push_back(as_string(v.items[i], key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

std::vector<double> as_number_list(const YamlValue& v, const std::string& key) {
  if (v.kind != YamlValue::Kind::Seq) {
    fail_at(v.where, key, "expected a sequence of numbers, got " + v.shown);
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    out.push_back(as_number(v.items[i], key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

std::string as_choice(const YamlValue& v, const std::string& key,
                      const std::vector<std::string>& names) {
  if (v.kind != YamlValue::Kind::String) {
    fail_at(v.where, key, "expected one of: " + join(names) + "; got " + v.shown);
  }
  for (const std::string& name : names) {
    if (name == v.text) return v.text;
  }
  fail_at(v.where, key, "unknown value " + v.shown + " (expected one of: " + join(names) + ")");
}

std::string yaml_string(const std::string& text) {
  // Plain when unambiguous: no indicator first, no ": " or " #", no ':' last.
  static const std::regex kSafe("[A-Za-z0-9_./]([A-Za-z0-9_./+:-]*[A-Za-z0-9_./+-])?");
  if (std::regex_match(text, kSafe)) {
    if (resolve_plain_scalar(text).kind == YamlKind::String) return text;
  }
  return double_quoted(text);
}

std::string yaml_string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += yaml_string(items[i]);
  }
  return out + "]";
}

std::string yaml_double_list(const std::vector<double>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += yaml_double(items[i]);
  }
  return out + "]";
}

}  // namespace config_detail
}  // namespace tft
