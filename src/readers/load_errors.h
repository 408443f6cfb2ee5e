// How loading errors name their place: "data.csv:12: column 'y': not a number: \"n/a\"", or
// "data.parquet: row 11 (row group 2): column 'y': ..." (RowSource::where).
#pragma once

#include <cstddef>
#include <string>

#include "readers/row_source.h"

namespace tft {

// DataError "<where position>: <what>".
[[noreturn]] void fail_at(const RowSource& source, std::size_t position, const std::string& what);
// DataError "<where position>: column '<column>': <what>".
[[noreturn]] void fail_column(const RowSource& source, std::size_t position,
                              const std::string& column, const std::string& what);

}  // namespace tft
