#include "readers/load_errors.h"

#include "common/error.h"

namespace tft {

void fail_at(const RowSource& source, std::size_t position, const std::string& what) {
  throw DataError(source.where(position) + ": " + what);
}

void fail_column(const RowSource& source, std::size_t position, const std::string& column,
                 const std::string& what) {
  fail_at(source, position, "column '" + column + "': " + what);
}

}  // namespace tft
