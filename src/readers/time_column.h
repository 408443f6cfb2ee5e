// The time column of a dataset's rows: integers (a time index) or ISO 8601 dates and
// date-times (iso8601.h; Parquet dates and timestamps), settled on the first row by
// data.time_format and the first value, and the calendar fields derived features need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/train_config.h"
#include "readers/cell_values.h"
#include "readers/iso8601.h"
#include "readers/row_source.h"

namespace tft {

// How the time column was read; decides how times print (TimeSeriesDataset::format_time).
enum class TimeKind {
  Integer,   // a time index
  Date,      // ISO 8601 dates (every value a date without time): microseconds since the epoch
  DateTime,  // ISO 8601 date-times: microseconds since the epoch, UTC
};

class TimeColumnReader {
 public:
  // `needs_calendar`: the name of a calendar feature in use ("" when none): the time column
  // must then hold dates or date-times, and `fields` are filled.
  TimeColumnReader(const RowSource& source, const CellReader& cells, const DataConfig& data,
                   std::string needs_calendar);

  // The time of a row's cell (an integer, or microseconds since the epoch); with a calendar
  // feature in use, `fields` gets its calendar fields.
  std::int64_t read(const Cell& cell, std::size_t position, DateTimeFields& fields);

  TimeKind kind() const { return kind_; }
  bool has_zone() const { return has_zone_; }
  // A time as messages show it.
  std::string text(std::int64_t time) const;

  // `hour` of a time column that holds dates only would be the constant 0: an input that
  // tells nothing, most likely a mistake about the column. DataError then, unless the header
  // has a column "hour" (`header_has_hour`).
  void reject_time_of_day_on_dates(bool header_has_hour) const;

 private:
  void decide_kind(bool integer, TimeKind kind, std::size_t position);
  std::int64_t read_text(std::string_view text, std::size_t position, DateTimeFields& fields);
  [[noreturn]] void fail(std::size_t position, const std::string& what) const;

  const RowSource& source_;
  const CellReader& cells_;
  const DataConfig& data_;
  std::string needs_calendar_;
  bool decided_ = false;
  bool integer_ = true;
  TimeKind kind_ = TimeKind::Integer;
  bool has_zone_ = false;  // some time was written with Z, an offset, or a zone
};

}  // namespace tft
