#include "readers/time_column.h"

#include <algorithm>
#include <optional>

#include "common/error.h"
#include "common/format.h"
#include "readers/load_errors.h"

namespace tft {

TimeColumnReader::TimeColumnReader(const RowSource& source, const CellReader& cells,
                                   const DataConfig& data, std::string needs_calendar)
    : source_(source), cells_(cells), data_(data), needs_calendar_(std::move(needs_calendar)) {}

void TimeColumnReader::fail(std::size_t position, const std::string& what) const {
  fail_column(source_, position, data_.time_column, what);
}

// Settles the column's kind on its first value. `integer` says whether the column holds
// integers (a time index).
void TimeColumnReader::decide_kind(bool integer, TimeKind kind, std::size_t position) {
  decided_ = true;
  integer_ = integer;
  if (integer && data_.time_format == TimeFormat::Iso8601) {
    fail(position, "holds integers, but data.time_format is iso8601");
  }
  if (!integer && data_.time_format == TimeFormat::Integer) {
    fail(position, "holds dates or timestamps, but data.time_format is integer");
  }
  if (integer && !needs_calendar_.empty()) {
    fail(position, "holds integers, but the derived feature '" + needs_calendar_ +
                       "' needs ISO 8601 dates or date-times");
  }
  kind_ = kind;
}

std::int64_t TimeColumnReader::read(const Cell& cell, std::size_t position,
                                    DateTimeFields& fields) {
  if (cells_.is_na(cell)) {
    fail(position, cells_.missing_text(cell) + " (the time column needs a value in every row)");
  }
  switch (cell.kind) {
    case Cell::Kind::Text:
    case Cell::Kind::String: return read_text(cell.text, position, fields);
    case Cell::Kind::Integer:
      if (!decided_) decide_kind(true, TimeKind::Integer, position);
      return cell.integer;
    case Cell::Kind::Timestamp:
      if (!decided_) decide_kind(false, TimeKind::DateTime, position);
      if (cell.has_zone) has_zone_ = true;
      // Calendar features read the wall clock of the column's time zone, as for a CSV time
      // written with its offset. Only they need the fields (a sixth of the reading time when
      // computed for every row).
      if (!needs_calendar_.empty()) fields = fields_from_micros(cell.local);
      return cell.integer;
    case Cell::Kind::Date:
      if (!decided_) decide_kind(false, TimeKind::Date, position);
      if (!needs_calendar_.empty()) fields = fields_from_micros(cell.integer);
      return cell.integer;
    default:
      fail(position, std::string("a ") + kind_noun(cell.kind) + " (" + shown_cell(cell) +
                         ") cannot be a time; store integers, dates or timestamps");
  }
}

std::int64_t TimeColumnReader::read_text(std::string_view text, std::size_t position,
                                         DateTimeFields& fields) {
  if (!decided_) {
    const bool integer = data_.time_format == TimeFormat::Integer ||
                         (data_.time_format == TimeFormat::Auto && looks_like_integer(text));
    decided_ = true;
    integer_ = integer;
    if (integer && !needs_calendar_.empty()) {
      fail(position, "holds integers, but the derived feature '" + needs_calendar_ +
                         "' needs ISO 8601 dates or date-times");
    }
    kind_ = integer ? TimeKind::Integer : TimeKind::Date;
  }
  if (integer_) {
    std::int64_t t = 0;
    if (!parse_int64(text, t)) fail(position, "not an integer: " + show_string(std::string(text)));
    return t;
  }
  std::string why;
  const std::optional<ParsedTime> parsed = parse_iso8601(trim(text), &why);
  if (!parsed) {
    fail(position,
         "not an ISO 8601 date or date-time: " + show_string(std::string(text)) + " (" + why + ")");
  }
  if (parsed->fields.has_time) kind_ = TimeKind::DateTime;
  if (parsed->fields.has_zone) has_zone_ = true;
  fields = parsed->fields;
  return parsed->micros;
}

std::string TimeColumnReader::text(std::int64_t time) const {
  if (integer_) return std::to_string(time);
  return format_iso8601(time, kind_ == TimeKind::Date);
}

void TimeColumnReader::reject_time_of_day_on_dates(bool header_has_hour) const {
  if (kind_ != TimeKind::Date) return;
  const auto named = [](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), "hour") != names.end();
  };
  const auto named_categorical = [](const std::vector<CategoricalColumn>& columns) {
    return std::any_of(columns.begin(), columns.end(),
                       [](const CategoricalColumn& c) { return c.name == "hour"; });
  };
  if (!header_has_hour && (named(data_.known_reals) || named(data_.unknown_reals) ||
                           named_categorical(data_.known_categoricals) ||
                           named_categorical(data_.unknown_categoricals))) {
    throw DataError(source_.name() + ": column '" + data_.time_column +
                    "' holds dates only, so the derived feature 'hour' would be 0 in every "
                    "row; remove it, or give the times of day");
  }
}

}  // namespace tft
