#include "readers/cell_values.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "common/format.h"
#include "readers/iso8601.h"
#include "readers/load_errors.h"

namespace tft {

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

NumberResult parse_double(std::string_view text, double& out) {
  std::string_view s = trim(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return NumberResult::NotANumber;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ptr != end) return NumberResult::NotANumber;
  if (ec == std::errc::result_out_of_range) return NumberResult::NotFinite;
  if (ec != std::errc()) return NumberResult::NotANumber;
  return std::isfinite(out) ? NumberResult::Ok : NumberResult::NotFinite;
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  std::string_view s = trim(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

bool looks_like_integer(std::string_view text) {
  std::int64_t ignored = 0;
  return parse_int64(text, ignored);
}

std::string shown_cell(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::Text:
    case Cell::Kind::String: return show_string(std::string(cell.text));
    case Cell::Kind::Null: return "null";
    case Cell::Kind::Real: return shortest_double(cell.real);
    case Cell::Kind::Integer: return std::to_string(cell.integer);
    case Cell::Kind::Timestamp: return format_iso8601(cell.integer, false);
    case Cell::Kind::Date: return format_iso8601(cell.integer, true);
  }
  return {};
}

const char* kind_noun(Cell::Kind kind) {
  switch (kind) {
    case Cell::Kind::Text: return "text";
    case Cell::Kind::String: return "string";
    case Cell::Kind::Null: return "null";
    case Cell::Kind::Real: return "floating-point number";
    case Cell::Kind::Integer: return "integer";
    case Cell::Kind::Timestamp: return "timestamp";
    case Cell::Kind::Date: return "date";
  }
  return "value";
}

CellReader::CellReader(const RowSource& source, const std::vector<std::string>& na_values)
    : source_(source),
      na_values_(na_values),
      na_only_empty_(na_values.size() == 1 && na_values[0].empty()),
      na_none_(na_values.empty()) {}

bool CellReader::is_na_text(std::string_view text) const {
  if (na_only_empty_) return text.empty();
  if (na_none_) return false;
  for (const std::string& na : na_values_) {
    if (text == na) return true;
  }
  return false;
}

bool CellReader::is_na(const Cell& cell) const {
  switch (cell.kind) {
    case Cell::Kind::Text: return is_na_text(cell.text);
    case Cell::Kind::Null: return true;
    case Cell::Kind::Real: return std::isnan(cell.real);
    default: return false;
  }
}

std::string CellReader::missing_text(const Cell& cell) const {
  if (cell.kind == Cell::Kind::Null) return "null value";
  if (cell.kind == Cell::Kind::Real) return "NaN value";
  return cell.text.empty() ? std::string("empty value")
                           : "missing value " + show_string(std::string(cell.text));
}

std::string_view CellReader::key_text(const Cell& cell, std::size_t position,
                                      const std::string& column, std::string& scratch) const {
  if (cell.kind == Cell::Kind::Text || cell.kind == Cell::Kind::String) return cell.text;
  if (cell.kind == Cell::Kind::Integer) {
    scratch = std::to_string(cell.integer);
    return scratch;
  }
  fail_column(source_, position, column,
              std::string("a ") + kind_noun(cell.kind) + " (" + shown_cell(cell) +
                  ") cannot name a category or a series; store the column as integers or "
                  "strings");
}

double CellReader::number(const Cell& cell, std::size_t position, const std::string& column,
                          bool as_float32) const {
  double value = 0.0;
  switch (cell.kind) {
    case Cell::Kind::Text: {
      const NumberResult result = parse_double(cell.text, value);
      if (result == NumberResult::NotANumber) {
        fail_column(source_, position, column,
                    "not a number: " + show_string(std::string(cell.text)));
      }
      if (result == NumberResult::NotFinite) value = std::numeric_limits<double>::infinity();
      break;
    }
    case Cell::Kind::Real: value = cell.real; break;
    case Cell::Kind::Integer:
      // Exact below 2^53; stored reals are float32, which rounds a CSV's integers alike.
      value = static_cast<double>(cell.integer);
      break;
    default:
      fail_column(source_, position, column,
                  std::string("a ") + kind_noun(cell.kind) + " (" + shown_cell(cell) +
                      "), not a number; store the column as numbers");
  }
  if (!std::isfinite(value) ||
      (as_float32 && std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))) {
    fail_column(
        source_, position, column,
        std::string(as_float32 ? "not a finite float32 number: " : "not a finite number: ") +
            shown_cell(cell));
  }
  return value;
}

}  // namespace tft
