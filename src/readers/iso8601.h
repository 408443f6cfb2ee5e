// ISO 8601 dates and date-times (extended format) for the time column of a CSV, and the
// calendar features derived from them (day_of_week, month, day_of_month, hour).
//
// Accepted forms:
//   2020-03-01                          a calendar date (midnight UTC)
//   2020-03-01T14:30  2020-03-01 14:30  a date-time ('T' or one space), minutes precision
//   2020-03-01T14:30:05                 with seconds
//   2020-03-01T14:30:05.123456          with a fraction (1 to 9 digits; kept to microseconds)
//   ...Z  ...+01:00  ...-0530  ...+01   a UTC designator or an offset (date-times only)
// A date-time without Z or offset is taken as UTC. Years 0000-9999; the day must exist in its
// month (leap years included); hour 00-23, minute 00-59, second 00-59 (no leap second, no
// 24:00). Week dates (2020-W10), ordinal dates (2020-061) and the basic format without
// separators (20200301) are not accepted.
//
// Instants are microseconds since 1970-01-01T00:00:00Z, so series sort by the actual instant
// whatever offsets the rows carry. Calendar fields are those written in the text (the local
// wall-clock time at that offset): "2020-03-01T23:30-05:00" is a Sunday at hour 23, which is
// what a business calendar means, although the instant is Monday 04:30 UTC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tft {

// Units of the stored times (microseconds since 1970-01-01T00:00:00Z).
inline constexpr std::int64_t kMicrosPerSecond = 1'000'000;
inline constexpr std::int64_t kMicrosPerHour = 3600 * kMicrosPerSecond;
inline constexpr std::int64_t kMicrosPerDay = 24 * kMicrosPerHour;

struct DateTimeFields {
  int year = 1970;
  int month = 1;           // 1-12
  int day = 1;             // 1-31
  int hour = 0;            // 0-23
  int minute = 0;          // 0-59
  int second = 0;          // 0-59
  int microsecond = 0;     // 0-999999
  int offset_minutes = 0;  // east of UTC; 0 for Z or no designator
  bool has_time = false;   // false for a bare date
  bool has_zone = false;   // a Z or an offset was written
};

struct ParsedTime {
  std::int64_t micros = 0;  // microseconds since the Unix epoch, UTC
  DateTimeFields fields;    // as written (local wall-clock time)
};

// Parses `text` (the whole string, no surrounding spaces). On failure returns nothing and, if
// `why` is not null, sets it to a short reason ("month 13 is out of range").
std::optional<ParsedTime> parse_iso8601(std::string_view text, std::string* why = nullptr);

// Days since 1970-01-01 of a proleptic Gregorian date (negative before 1970).
std::int64_t days_from_civil(int year, int month, int day);

// 0 = Monday ... 6 = Sunday (ISO 8601 numbering minus one).
int day_of_week(int year, int month, int day);

// The calendar fields of an instant on the UTC clock (offset 0; has_time when it is not a
// midnight). Years outside int's range do not occur for int64 microseconds.
DateTimeFields fields_from_micros(std::int64_t micros);

// UTC text of an instant: "2020-03-01" when `date_only` (the instant must be a midnight),
// else "2020-03-01T14:30:05Z", with ".123456" when it has a fraction, and without the Z when
// not `utc_designator` (times read without a zone are written back without one).
std::string format_iso8601(std::int64_t micros, bool date_only, bool utc_designator = true);

}  // namespace tft
