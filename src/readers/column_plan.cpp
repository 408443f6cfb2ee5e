#include "readers/column_plan.h"

#include <algorithm>
#include <unordered_map>

#include "common/error.h"
#include "common/format.h"
#include "readers/load_errors.h"

namespace tft {

namespace {

// The header's columns by name, and the names that appear more than once.
class HeaderIndex {
 public:
  explicit HeaderIndex(const RowSource& source) : source_(source) {
    const std::vector<std::string>& header = source.header();
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (!index_.emplace(header[i], static_cast<int>(i)).second) {
        duplicated_.push_back(header[i]);
      }
    }
  }

  bool has(const std::string& name) const { return index_.count(name) != 0; }

  // The column `name`, configured by `key`: it must be in the header, once.
  int column(const std::string& name, const std::string& key) const {
    const auto it = index_.find(name);
    if (it == index_.end()) {
      fail(name,
           "not in the header (named by " + key + "; columns: " + join(source_.header()) + ")");
    }
    if (std::find(duplicated_.begin(), duplicated_.end(), name) != duplicated_.end()) {
      fail(name, "appears more than once in the header");
    }
    return it->second;
  }

  // A time-varying variable: a header column, else a derived feature (of a known input).
  ColumnSource source(const std::string& name, const std::string& key, bool known,
                      bool categorical) const {
    if (has(name)) return ColumnSource{column(name, key), DerivedFeature::None};
    const DerivedFeature d = derived_feature(name);
    if (d == DerivedFeature::None) column(name, key);  // throws: not in the header
    if (!known) {
      fail(name, "not in the header, and derived features (" + join(derived_feature_names()) +
                     ") are known in advance: list it under data.known_reals or "
                     "data.known_categoricals (named by " +
                     key + ")");
    }
    if (d == DerivedFeature::RelativeTimeIdx && categorical) {
      fail(name, "relative_time_idx is a real; list it under data.known_reals");
    }
    return ColumnSource{-1, d};
  }

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    fail_column(source_, source_.header_position(), name, what);
  }

  const RowSource& source_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::string> duplicated_;
};

std::string item_key(const char* list, std::size_t i) {
  return std::string("data.") + list + "[" + std::to_string(i) + "]";
}

void plan_time_varying(const HeaderIndex& header, const DataConfig& data, ColumnPlan& plan) {
  for (std::size_t i = 0; i < data.unknown_reals.size(); ++i) {
    const std::string& name = data.unknown_reals[i];
    plan.reals.push_back(
        PlannedReal{name, header.source(name, item_key("unknown_reals", i), false, false)});
  }
  for (std::size_t i = 0; i < data.known_reals.size(); ++i) {
    const std::string& name = data.known_reals[i];
    const ColumnSource s = header.source(name, item_key("known_reals", i), true, false);
    if (s.derived != DerivedFeature::RelativeTimeIdx) plan.reals.push_back(PlannedReal{name, s});
  }
  plan.reals.push_back(
      PlannedReal{data.target, header.source(data.target, "data.target", false, false)});

  const auto add_categoricals = [&](const std::vector<CategoricalColumn>& columns, const char* list,
                                    bool known) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      plan.categoricals.push_back(PlannedCategorical{
          columns[i].name, header.source(columns[i].name, item_key(list, i), known, true),
          columns[i].embedding_dim});
    }
  };
  add_categoricals(data.unknown_categoricals, "unknown_categoricals", false);
  add_categoricals(data.known_categoricals, "known_categoricals", true);
}

void plan_static(const HeaderIndex& header, const DataConfig& data, ColumnPlan& plan) {
  for (std::size_t i = 0; i < data.static_reals.size(); ++i) {
    const std::string& name = data.static_reals[i];
    plan.static_reals.push_back(PlannedReal{
        name,
        ColumnSource{header.column(name, item_key("static_reals", i)), DerivedFeature::None}});
  }
  for (std::size_t i = 0; i < data.static_categoricals.size(); ++i) {
    const CategoricalColumn& c = data.static_categoricals[i];
    plan.static_categoricals.push_back(
        PlannedCategorical{c.name,
                           ColumnSource{header.column(c.name, item_key("static_categoricals", i)),
                                        DerivedFeature::None},
                           c.embedding_dim});
  }
}

}  // namespace

ColumnPlan plan_columns(const RowSource& source, const DataConfig& data) {
  const HeaderIndex header(source);
  ColumnPlan plan;
  plan.time = header.column(data.time_column, "data.time_column");
  for (std::size_t i = 0; i < data.group_columns.size(); ++i) {
    plan.groups.push_back(
        header.column(data.group_columns[i], "data.group_columns[" + std::to_string(i) + "]"));
  }
  plan_time_varying(header, data, plan);
  plan_static(header, data, plan);
  for (const PlannedReal& r : plan.reals) {
    if (r.source.derived != DerivedFeature::None) plan.needs_calendar = r.name;
  }
  for (const PlannedCategorical& c : plan.categoricals) {
    if (c.source.derived != DerivedFeature::None) plan.needs_calendar = c.name;
  }
  plan.header_has_hour = header.has("hour");
  return plan;
}

std::vector<int> ColumnPlan::read_columns() const {
  std::vector<int> columns{time};
  columns.insert(columns.end(), groups.begin(), groups.end());
  for (const PlannedReal& r : reals) {
    if (r.source.column >= 0) columns.push_back(r.source.column);
  }
  for (const PlannedCategorical& c : categoricals) {
    if (c.source.column >= 0) columns.push_back(c.source.column);
  }
  for (const PlannedReal& r : static_reals) columns.push_back(r.source.column);
  for (const PlannedCategorical& c : static_categoricals) columns.push_back(c.source.column);
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  return columns;
}

std::size_t ColumnPlan::target_index(const std::string& target) const {
  for (std::size_t r = 0; r < reals.size(); ++r) {
    if (reals[r].name == target) return r;
  }
  throw DataError("dataset: the target '" + target + "' is not a stored column");
}

}  // namespace tft
