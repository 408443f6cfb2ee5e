#include "data/categorical_encoder.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace tft {

CategoricalEncoder::CategoricalEncoder(std::vector<std::string> categories)
    : categories_(std::move(categories)) {
  codes_.reserve(categories_.size());
  for (std::size_t i = 0; i < categories_.size(); ++i) {
    if (!codes_.emplace(categories_[i], static_cast<std::int64_t>(i) + 1).second) {
      throw DataError("categorical encoder: duplicate category \"" + categories_[i] + "\"");
    }
  }
}

CategoricalEncoder CategoricalEncoder::fit(const std::vector<std::string>& values) {
  std::vector<std::string> distinct = values;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return CategoricalEncoder(std::move(distinct));
}

CategoricalEncoder CategoricalEncoder::grown_with(const CategoricalEncoder& other) const {
  std::vector<std::string> categories = categories_;
  for (const std::string& category : other.categories_) {
    if (codes_.count(category) == 0) categories.push_back(category);
  }
  return CategoricalEncoder(std::move(categories));
}

CategoricalEncoder CategoricalEncoder::fit_on_rows(const std::vector<std::string>& values,
                                                   const std::vector<std::int32_t>& ids,
                                                   const std::vector<RowRange>& rows) {
  std::vector<char> used(values.size(), 0);
  for (const RowRange& range : rows) {
    for (std::int64_t r = 0; r < range.rows; ++r) {
      used[static_cast<std::size_t>(ids[static_cast<std::size_t>(range.offset + r)])] = 1;
    }
  }
  std::vector<std::string> seen;
  for (std::size_t id = 0; id < used.size(); ++id) {
    if (used[id]) seen.push_back(values[id]);
  }
  return fit(seen);
}

void CategoricalEncoder::encode_ids(const std::vector<std::string>& values,
                                    std::vector<std::int32_t>& ids) const {
  std::vector<std::int32_t> code(values.size());
  for (std::size_t id = 0; id < code.size(); ++id) {
    code[id] = static_cast<std::int32_t>(encode(values[id]));
  }
  for (std::int32_t& v : ids) v = code[static_cast<std::size_t>(v)];
}

std::int64_t CategoricalEncoder::encode(std::string_view value) const {
  const auto it = codes_.find(std::string(value));
  return it == codes_.end() ? 0 : it->second;
}

const std::string& CategoricalEncoder::decode(std::int64_t code) const {
  static const std::string kUnknown;
  if (code == 0) return kUnknown;
  if (code < 0 || code > static_cast<std::int64_t>(categories_.size())) {
    throw DataError("categorical encoder: code " + std::to_string(code) + " is out of range [0, " +
                    std::to_string(cardinality()) + ")");
  }
  return categories_[static_cast<std::size_t>(code - 1)];
}

nlohmann::json CategoricalEncoder::to_json() const {
  return nlohmann::json{{"categories", categories_}};
}

CategoricalEncoder CategoricalEncoder::from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("categories") || !json["categories"].is_array()) {
    throw DataError("categorical encoder: expected an object {\"categories\": [...]}");
  }
  std::vector<std::string> categories;
  for (const nlohmann::json& item : json["categories"]) {
    if (!item.is_string()) {
      throw DataError("categorical encoder: categories must be strings, got " + item.dump());
    }
    categories.push_back(item.get<std::string>());
  }
  return CategoricalEncoder(std::move(categories));
}

bool operator==(const CategoricalEncoder& a, const CategoricalEncoder& b) {
  return a.categories() == b.categories();
}
bool operator!=(const CategoricalEncoder& a, const CategoricalEncoder& b) { return !(a == b); }

}  // namespace tft
