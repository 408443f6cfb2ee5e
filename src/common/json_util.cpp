#include "common/json_util.h"

#include <cmath>
#include <limits>

#include "common/error.h"

namespace tft {

const nlohmann::json& json_get(const nlohmann::json& json, const std::string& key,
                               const std::string& where) {
  if (!json.is_object()) throw IoError(where + ": expected a JSON object");
  const auto it = json.find(key);
  if (it == json.end()) throw IoError(where + ": key '" + key + "' is missing");
  return *it;
}

double json_get_number(const nlohmann::json& json, const std::string& key,
                       const std::string& where) {
  const nlohmann::json& v = json_get(json, key, where);
  if (!v.is_number()) throw IoError(where + ": key '" + key + "': expected a number");
  return v.get<double>();
}

double json_get_number_or_inf(const nlohmann::json& json, const std::string& key,
                              const std::string& where) {
  const nlohmann::json& v = json_get(json, key, where);
  if (v.is_null()) return std::numeric_limits<double>::infinity();
  return json_get_number(json, key, where);
}

double json_get_number_or_nan(const nlohmann::json& json, const std::string& key,
                              const std::string& where) {
  const nlohmann::json& v = json_get(json, key, where);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return json_get_number(json, key, where);
}

std::int64_t json_get_int(const nlohmann::json& json, const std::string& key,
                          const std::string& where) {
  const nlohmann::json& v = json_get(json, key, where);
  if (!v.is_number_integer()) throw IoError(where + ": key '" + key + "': expected an integer");
  return v.get<std::int64_t>();
}

std::string json_get_string(const nlohmann::json& json, const std::string& key,
                            const std::string& where) {
  const nlohmann::json& v = json_get(json, key, where);
  if (!v.is_string()) throw IoError(where + ": key '" + key + "': expected a string");
  return v.get<std::string>();
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw IoError(where + ": not valid JSON: " + e.what());
  }
}

}  // namespace tft
