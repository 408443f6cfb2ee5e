// String -> index encoding of one categorical column. Index 0 is the unknown bucket: values
// not seen when fitting (a new store in the validation part, a new series at inference) map to
// it, so the model always has an embedding row for them. Known categories get 1..n in byte-wise
// sorted order, so the codes do not depend on the order of rows in the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/row_range.h"

namespace tft {

class CategoricalEncoder {
 public:
  CategoricalEncoder() = default;
  // Categories in code order: categories[i] gets code i + 1. Duplicates are an error
  // (DataError).
  explicit CategoricalEncoder(std::vector<std::string> categories);

  // Distinct values of `values`, sorted.
  static CategoricalEncoder fit(const std::vector<std::string>& values);

  // Fitted on a column read as ids into `values` (each value once): the values whose id
  // occurs in `rows` of `ids` (a column's training parts), sorted.
  static CategoricalEncoder fit_on_rows(const std::vector<std::string>& values,
                                        const std::vector<std::int32_t>& ids,
                                        const std::vector<RowRange>& rows);

  // This encoder with the categories of `other` it lacks appended, in `other`'s order: every
  // code of this one keeps its category (a refit growing the vocabulary, train/refit.h).
  CategoricalEncoder grown_with(const CategoricalEncoder& other) const;

  // 1..n for a known category, 0 for anything else.
  std::int64_t encode(std::string_view value) const;
  // Replaces every id in `ids` (an index into `values`) by the code of its value.
  void encode_ids(const std::vector<std::string>& values, std::vector<std::int32_t>& ids) const;
  // The category of a code; "" for 0 (unknown). DataError when out of range.
  const std::string& decode(std::int64_t code) const;
  // Number of codes, unknown bucket included: categories().size() + 1.
  std::int64_t cardinality() const { return static_cast<std::int64_t>(categories_.size()) + 1; }
  const std::vector<std::string>& categories() const { return categories_; }

  // {"categories": ["a", "b"]}: code i + 1 is categories[i]; code 0 is implied.
  nlohmann::json to_json() const;
  static CategoricalEncoder from_json(const nlohmann::json& json);

 private:
  std::vector<std::string> categories_;
  std::unordered_map<std::string, std::int64_t> codes_;
};

bool operator==(const CategoricalEncoder& a, const CategoricalEncoder& b);
bool operator!=(const CategoricalEncoder& a, const CategoricalEncoder& b);

}  // namespace tft
