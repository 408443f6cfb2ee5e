#include "data/series_storage.h"

#include <cstddef>

namespace tft {

namespace {

template <typename T>
void permute(std::vector<T>& column, const std::vector<std::size_t>& order) {
  std::vector<T> out(column.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = column[order[i]];
  column.swap(out);
}

}  // namespace

void store_by_series(LoadedRows& rows) {
  std::int64_t offset = 0;
  for (SeriesInfo& info : rows.series) {
    info.offset = offset;
    offset += info.length;
  }
  if (rows.interleaved) {
    // Stable counting sort by series (series in order of first appearance).
    std::vector<std::size_t> next(rows.series.size());
    for (std::size_t s = 0; s < next.size(); ++s) {
      next[s] = static_cast<std::size_t>(rows.series[s].offset);
    }
    std::vector<std::size_t> order(rows.row_series.size());
    for (std::size_t row = 0; row < rows.row_series.size(); ++row) {
      order[next[rows.row_series[row]]++] = row;
    }
    permute(rows.times, order);
    for (auto& c : rows.reals) permute(c, order);
    for (auto& c : rows.categoricals) permute(c, order);
  }
  std::vector<std::uint32_t>().swap(rows.row_series);
  for (auto& c : rows.reals) c.shrink_to_fit();
  for (auto& c : rows.categoricals) c.shrink_to_fit();
  rows.times.shrink_to_fit();
}

}  // namespace tft
