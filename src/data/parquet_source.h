// Rows of a Parquet file through Apache Arrow C++ (the `arrow` and `parquet` libraries of the
// pyarrow wheel; cmake/TftArrow.cmake), in builds with TFT_WITH_PARQUET.
//
// Only the columns the dataset builder selects are decoded, in record batches of at most
// `batch_rows` rows, so memory stays bounded by a batch whatever the file's size; values
// arrive typed (row_source.h's Cell), never as text. Column types:
//   - int8-int64, uint8-uint32: Integer; uint64 up to 2^63 - 1; boolean: Integer 0 or 1;
//   - float, double: Real (NaN is missing, as in pandas);
//   - string, large_string, string_view, and dictionaries of them or of integers: String or
//     Integer;
//   - timestamp of any unit, with or without a time zone: Timestamp, in microseconds (a value
//     with a fraction of a microsecond is an error, not rounded); a zoned timestamp's calendar
//     features use the zone's wall clock (Arrow's local_timestamp, the system's tz database);
//   - date32, date64: Date.
// Anything else (decimals, half floats, binary, nested types, times of day, durations) is a
// DataError naming the file, the column and its type. A file that is not Parquet, truncated
// or damaged is a DataError naming the file (and the row group being read when it shows
// there); an unreadable file is an IoError.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "data/row_source.h"

namespace tft {

std::unique_ptr<RowSource> open_parquet_file(const std::string& path,
                                             std::size_t batch_rows = 65536);

// The Arrow C++ version this build reads Parquet with ("26.0.1").
std::string arrow_version();

}  // namespace tft
