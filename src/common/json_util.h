// Small helpers for the JSON files the trainer writes and reads back (snapshot state, saved
// model files, metrics): JSON has no NaN or infinity, so non-finite numbers are written as
// null, and reading checks presence and type with a message naming the key.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tft {

// `value`, or null when it is NaN or infinite (Json: nlohmann::json or ordered_json).
template <typename Json = nlohmann::json>
Json json_number(double value) {
  if (!std::isfinite(value)) return Json(nullptr);
  return Json(value);
}

// Readers of json[key]; `where` prefixes the message ("snapshot: key 'epoch': ..."). Every
// failure is a tft::IoError (these files are written by the library, so a bad one is a
// corrupt or foreign file).
double json_get_number(const nlohmann::json& json, const std::string& key,
                       const std::string& where);
// null reads as +infinity (a "best loss" before any epoch).
double json_get_number_or_inf(const nlohmann::json& json, const std::string& key,
                              const std::string& where);
// null reads as NaN (a metric that was not available).
double json_get_number_or_nan(const nlohmann::json& json, const std::string& key,
                              const std::string& where);
std::int64_t json_get_int(const nlohmann::json& json, const std::string& key,
                          const std::string& where);
std::string json_get_string(const nlohmann::json& json, const std::string& key,
                            const std::string& where);
const nlohmann::json& json_get(const nlohmann::json& json, const std::string& key,
                               const std::string& where);

// Parses text (IoError "where: not valid JSON: ..." on failure).
nlohmann::json parse_json(const std::string& text, const std::string& where);

}  // namespace tft
