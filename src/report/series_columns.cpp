#include "report/series_columns.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

namespace tft {

namespace {

// Every fixed column of forecast.csv and backtest.csv (docs/outputs.md).
constexpr std::array<std::string_view, 8> kFixedColumns = {
    "kind", "origin", "time", "horizon", "actual", "fold", "naive", "seasonal_naive"};

// "q" and a number that strtod reads whole: the quantile columns' names.
bool is_quantile_column(const std::string& name) {
  if (name.size() < 2 || name[0] != 'q') return false;
  const char* number = name.c_str() + 1;
  char* end = nullptr;
  std::strtod(number, &end);
  return end != number && *end == '\0';
}

}  // namespace

bool is_fixed_forecast_column(const std::string& name) {
  return std::find(kFixedColumns.begin(), kFixedColumns.end(), name) != kFixedColumns.end() ||
         is_quantile_column(name);
}

std::vector<std::string> series_column_names(const std::vector<std::string>& group_columns) {
  if (group_columns.empty()) return {"series"};
  auto is_group_column = [&](const std::string& name) {
    return std::find(group_columns.begin(), group_columns.end(), name) != group_columns.end();
  };
  std::vector<std::string> names;
  for (const std::string& column : group_columns) {
    std::string name = column;
    // A renamed column must not take another group column's name, nor one given before.
    auto taken = [&](const std::string& candidate) {
      return is_fixed_forecast_column(candidate) ||
             (candidate != column && is_group_column(candidate)) ||
             std::find(names.begin(), names.end(), candidate) != names.end();
    };
    while (taken(name)) name = "series_" + name;
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace tft
