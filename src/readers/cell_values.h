// One cell of a row (row_source.h) as the value its column's role needs: a number, the text
// that names a category or a series, or missing (data.na_values for CSV text; Parquet nulls
// and NaN). Problems are DataErrors that name the row and the column (load_errors.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readers/row_source.h"

namespace tft {

// `s` without leading and trailing spaces and tabs.
std::string_view trim(std::string_view s);

enum class NumberResult { Ok, NotANumber, NotFinite };

// A decimal number (spaces around and a leading '+' allowed): NotFinite for infinities, NaN
// and values out of double's range.
NumberResult parse_double(std::string_view text, double& out);
// A decimal integer (spaces around and a leading '+' allowed).
bool parse_int64(std::string_view text, std::int64_t& out);
bool looks_like_integer(std::string_view text);

// A cell as messages show it: text double-quoted (show_string), numbers, times and dates as
// written, "null".
std::string shown_cell(const Cell& cell);
// "text", "string", "floating-point number", ...: what a cell holds, for messages.
const char* kind_noun(Cell::Kind kind);

class CellReader {
 public:
  // `na_values`: data.na_values, the CSV texts that are missing.
  CellReader(const RowSource& source, const std::vector<std::string>& na_values);

  // A missing value: CSV text listed in data.na_values, a Parquet null or NaN. A Parquet
  // string is a value whatever it says.
  bool is_na(const Cell& cell) const;
  // A missing cell for messages: "empty value", "missing value \"NA\"", "null value", ...
  std::string missing_text(const Cell& cell) const;

  // The text that names a category or a series: CSV text and Parquet strings as they are,
  // Parquet integers in decimal (as a CSV of the same data writes them, so both give the same
  // categories; the text is then kept in `scratch`). Floats, times and dates cannot: their
  // text would depend on formatting.
  std::string_view key_text(const Cell& cell, std::size_t position, const std::string& column,
                            std::string& scratch) const;

  // The number in a real column's cell; it must be finite, and with `as_float32` (stored
  // reals; static reals are doubles) within float32's range.
  double number(const Cell& cell, std::size_t position, const std::string& column,
                bool as_float32) const;

 private:
  bool is_na_text(std::string_view text) const;

  const RowSource& source_;
  const std::vector<std::string>& na_values_;
  bool na_only_empty_;
  bool na_none_;
};

}  // namespace tft
