// Rows of a Parquet file through Apache Arrow C++ (the `arrow` and `parquet` libraries of the
// pyarrow wheel; cmake/TftArrow.cmake), in builds with TFT_WITH_PARQUET.
//
// Only the columns the dataset builder selects are decoded, in record batches of at most
// `batch_rows` rows, so memory stays bounded by a batch whatever the file's size; values
// arrive typed, with the column types, null and NaN rules of every Arrow source
// (arrow_row_source.h). A row is "data.parquet: row 11 (row group 2)". A file that is not
// Parquet, truncated or damaged is a DataError naming the file (and the row group being read
// when it shows there); an unreadable file is an IoError.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "readers/row_source.h"

namespace tft {

std::unique_ptr<RowSource> open_parquet_file(const std::string& path,
                                             std::size_t batch_rows = 65536);

// The Arrow C++ version this build reads Parquet with ("26.0.1").
std::string arrow_version();

}  // namespace tft
