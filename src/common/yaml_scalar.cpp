#include "common/yaml_scalar.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

#include "common/format.h"

namespace tft {

namespace {

// An integer's kind and value from its digits; `text` matches [-+]?[0-9]+.
void resolve_integer(const std::string& text, YamlScalar& v) {
  v.number = std::strtod(text.c_str(), nullptr);
  const bool negative = text[0] == '-' && text.find_first_not_of("-0") != std::string::npos;
  std::uint64_t magnitude = 0;
  bool overflow = false;
  for (char ch : text) {
    if (ch < '0' || ch > '9') continue;  // sign
    const auto digit = static_cast<std::uint64_t>(ch - '0');
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) overflow = true;
    magnitude = magnitude * 10 + digit;
  }
  if (!negative) {
    v.kind = overflow ? YamlKind::BigInt : YamlKind::UInt;
    v.uint = overflow ? 0 : magnitude;
    return;
  }
  const std::uint64_t int64_min_magnitude =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1;
  if (overflow || magnitude > int64_min_magnitude) {
    v.kind = YamlKind::BigInt;
  } else {
    v.kind = YamlKind::NegInt;
    v.sint = magnitude == int64_min_magnitude ? std::numeric_limits<std::int64_t>::min()
                                              : -static_cast<std::int64_t>(magnitude);
  }
}

}  // namespace

YamlScalar resolve_plain_scalar(const std::string& s) {
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");
  YamlScalar v;
  v.shown = s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    v.kind = YamlKind::Null;
    v.shown = "null";
  } else if (s == "true" || s == "True" || s == "TRUE") {
    v.kind = YamlKind::Bool;
    v.boolean = true;
  } else if (s == "false" || s == "False" || s == "FALSE") {
    v.kind = YamlKind::Bool;
  } else if (std::regex_match(s, kInt)) {
    resolve_integer(s, v);
  } else if (std::regex_match(s, kFloat)) {
    v.kind = YamlKind::Float;
    v.number = std::strtod(s.c_str(), nullptr);
  } else if (std::regex_match(s, kInf)) {
    v.kind = YamlKind::Float;
    v.number = s[0] == '-' ? -std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::infinity();
  } else if (std::regex_match(s, kNan)) {
    v.kind = YamlKind::Float;
    v.number = std::numeric_limits<double>::quiet_NaN();
  } else {
    v.kind = YamlKind::String;
    v.text = s;
    v.shown = show_string(s);
  }
  return v;
}

bool is_negative_big_int(const YamlScalar& scalar) {
  return scalar.kind == YamlKind::BigInt && !scalar.shown.empty() && scalar.shown[0] == '-';
}

std::string yaml_double(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value < 0 ? "-.inf" : ".inf";
  std::string text = shortest_double(value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

}  // namespace tft
