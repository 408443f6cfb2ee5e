#include "strategy_spec.h"

#include "common/error.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>

namespace tft::bench {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

std::optional<std::size_t> as_index(const std::string& text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string accepted(const std::vector<std::string>& units) {
  std::string names;
  for (const auto& u : units) names += (names.empty() ? "" : ", ") + u;
  return "accepted: none, full, unit:NAME, uniform:K, selective:I,J,..., dynamic:F, each "
         "optionally +bf16 or +int8; units: " +
         names;
}

// Splits "full+int8" into "full" and the boundary dtype (float32 without a suffix).
BoundaryDtype take_boundary_suffix(std::string& token) {
  const auto plus = token.rfind('+');
  // Not "dynamic:2.5e+01"'s exponent.
  if (plus == std::string::npos || plus + 1 == token.size() ||
      std::isdigit(static_cast<unsigned char>(token[plus + 1]))) {
    return BoundaryDtype::kFloat32;
  }
  const std::string suffix = token.substr(plus + 1);
  BoundaryDtype dtype = BoundaryDtype::kFloat32;
  if (suffix == "bf16") {
    dtype = BoundaryDtype::kBFloat16;
  } else if (suffix == "int8") {
    dtype = BoundaryDtype::kInt8;
  } else {
    throw ConfigError("--strategies: '" + token + "': unknown boundary suffix '+" + suffix +
                      "' (accepted: +bf16, +int8)");
  }
  token.resize(plus);
  return dtype;
}

std::size_t unit_index(const std::string& name, const std::vector<std::string>& units) {
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (units[i] == name) return i;
  }
  if (auto index = as_index(name); index && *index < units.size()) return *index;
  throw ConfigError("--strategies: unknown unit '" + name + "' (" + accepted(units) + ")");
}

}  // namespace

std::vector<StrategySpec> parse_strategies(const std::string& text,
                                           const std::vector<std::string>& unit_names) {
  std::vector<StrategySpec> specs;
  for (const std::string& written : split(text, ',')) {
    std::string token = written;
    const BoundaryDtype boundary = take_boundary_suffix(token);
    // A bare index continues the preceding selective: list (unless that one already ended
    // with a suffix).
    if (as_index(token) && !specs.empty() && specs.back().label.rfind("selective:", 0) == 0 &&
        specs.back().label.find('+') == std::string::npos) {
      auto& layers = std::get<SelectiveStrategy>(specs.back().config.strategy).layers;
      layers.push_back(unit_index(token, unit_names));
      specs.back().label += "," + written;
      specs.back().config.boundary_dtype = boundary;
      specs.back().config.validate(unit_names.size());
      continue;
    }
    const auto colon = token.find(':');
    const std::string kind = token.substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : token.substr(colon + 1);
    StrategySpec spec{written, {}};
    if (kind == "none" && arg.empty()) {
      spec.config = CheckpointConfig::none();
    } else if (kind == "full" && arg.empty()) {
      spec.config = CheckpointConfig::uniform(1);
    } else if (kind == "unit" && !arg.empty()) {
      spec.config = CheckpointConfig::selective({unit_index(arg, unit_names)});
    } else if (kind == "uniform" && as_index(arg) && *as_index(arg) > 0) {
      spec.config = CheckpointConfig::uniform(*as_index(arg));
    } else if (kind == "selective" && !arg.empty()) {
      spec.config = CheckpointConfig::selective({unit_index(arg, unit_names)});
    } else if (kind == "dynamic" && !arg.empty()) {
      double fraction = 0;
      try {
        std::size_t used = 0;
        fraction = std::stod(arg, &used);
        if (used != arg.size()) throw std::invalid_argument(arg);
      } catch (const std::exception&) {
        throw ConfigError("--strategies: '" + token + "': not a number: \"" + arg + "\"");
      }
      spec.config = CheckpointConfig::dynamic(unit_names.size(), fraction);
    } else {
      throw ConfigError("--strategies: cannot read '" + written + "' (" + accepted(unit_names) +
                        ")");
    }
    spec.config.boundary_dtype = boundary;
    spec.config.validate(unit_names.size());
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) throw ConfigError("--strategies: empty list");
  return specs;
}

}  // namespace tft::bench
