// A range of rows in a dataset's series-contiguous columns: typically a series' training
// part, the rows transforms are fitted on.
#pragma once

#include <cstdint>

namespace tft {

struct RowRange {
  std::int64_t offset = 0;  // first row
  std::int64_t rows = 0;
};

}  // namespace tft
