#include "readers/iso8601.h"

#include <cstdio>

namespace tft {

namespace {

bool is_leap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// Reads exactly `count` digits at text[pos...]; advances pos.
bool digits(std::string_view text, std::size_t& pos, int count, int& out) {
  if (pos + static_cast<std::size_t>(count) > text.size()) return false;
  int value = 0;
  for (int i = 0; i < count; ++i) {
    const char ch = text[pos + static_cast<std::size_t>(i)];
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + (ch - '0');
  }
  pos += static_cast<std::size_t>(count);
  out = value;
  return true;
}

bool expect(std::string_view text, std::size_t& pos, char ch) {
  if (pos >= text.size() || text[pos] != ch) return false;
  ++pos;
  return true;
}

std::optional<ParsedTime> failure(std::string* why, const std::string& reason) {
  if (why != nullptr) *why = reason;
  return std::nullopt;
}

}  // namespace

std::int64_t days_from_civil(int year, int month, int day) {
  // Howard Hinnant's days_from_civil.
  const std::int64_t y = static_cast<std::int64_t>(year) - (month <= 2 ? 1 : 0);
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t mp = (month + 9) % 12;
  const std::int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int day_of_week(int year, int month, int day) {
  // 1970-01-01 was a Thursday (3 when Monday is 0).
  const std::int64_t days = days_from_civil(year, month, day);
  return static_cast<int>(((days % 7) + 7 + 3) % 7);
}

std::optional<ParsedTime> parse_iso8601(std::string_view text, std::string* why) {
  ParsedTime out;
  DateTimeFields& f = out.fields;
  std::size_t pos = 0;
  if (!digits(text, pos, 4, f.year) || !expect(text, pos, '-') || !digits(text, pos, 2, f.month) ||
      !expect(text, pos, '-') || !digits(text, pos, 2, f.day)) {
    return failure(why, "expected a date YYYY-MM-DD");
  }
  if (f.month < 1 || f.month > 12) {
    return failure(why, "month " + std::to_string(f.month) + " is out of range");
  }
  if (f.day < 1 || f.day > days_in_month(f.year, f.month)) {
    return failure(why, "day " + std::to_string(f.day) + " does not exist in " +
                            std::to_string(f.year) + "-" + (f.month < 10 ? "0" : "") +
                            std::to_string(f.month));
  }
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') {
      return failure(why, "expected 'T' or a space after the date");
    }
    ++pos;
    f.has_time = true;
    if (!digits(text, pos, 2, f.hour) || !expect(text, pos, ':') ||
        !digits(text, pos, 2, f.minute)) {
      return failure(why, "expected a time hh:mm after the date");
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!digits(text, pos, 2, f.second)) return failure(why, "expected seconds after ':'");
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        ++pos;
        int count = 0;
        int micros = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          if (count < 6) micros = micros * 10 + (text[pos] - '0');
          ++count;
          ++pos;
        }
        if (count == 0 || count > 9) return failure(why, "expected 1 to 9 fraction digits");
        for (int i = count; i < 6; ++i) micros *= 10;
        f.microsecond = micros;
      }
    }
    if (f.hour > 23) return failure(why, "hour " + std::to_string(f.hour) + " is out of range");
    if (f.minute > 59) {
      return failure(why, "minute " + std::to_string(f.minute) + " is out of range");
    }
    if (f.second > 59) {
      return failure(why, "second " + std::to_string(f.second) + " is out of range");
    }
    if (pos < text.size()) {
      const char sign = text[pos];
      f.has_zone = true;
      if (sign == 'Z' || sign == 'z') {
        ++pos;
      } else if (sign == '+' || sign == '-') {
        ++pos;
        int oh = 0;
        int om = 0;
        if (!digits(text, pos, 2, oh)) return failure(why, "expected an offset +hh[:mm]");
        if (pos < text.size()) {
          if (text[pos] == ':') ++pos;
          if (!digits(text, pos, 2, om)) return failure(why, "expected an offset +hh[:mm]");
        }
        if (oh > 23 || om > 59) return failure(why, "offset out of range");
        f.offset_minutes = (sign == '-' ? -1 : 1) * (oh * 60 + om);
      } else {
        return failure(why, "unexpected text after the time");
      }
    }
  }
  if (pos != text.size()) return failure(why, "unexpected text after the date-time");

  const std::int64_t seconds = days_from_civil(f.year, f.month, f.day) * 86400 +
                               static_cast<std::int64_t>(f.hour) * 3600 + f.minute * 60 + f.second -
                               static_cast<std::int64_t>(f.offset_minutes) * 60;
  out.micros = seconds * kMicrosPerSecond + f.microsecond;
  return out;
}

DateTimeFields fields_from_micros(std::int64_t micros) {
  std::int64_t days = micros / kMicrosPerDay;
  std::int64_t rest = micros % kMicrosPerDay;
  if (rest < 0) {
    rest += kMicrosPerDay;
    --days;
  }
  // Hinnant's civil_from_days.
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  DateTimeFields f;
  f.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  f.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  f.year = static_cast<int>(yoe + era * 400 + (f.month <= 2 ? 1 : 0));
  const std::int64_t secs = rest / kMicrosPerSecond;
  f.microsecond = static_cast<int>(rest % kMicrosPerSecond);
  f.hour = static_cast<int>(secs / 3600);
  f.minute = static_cast<int>((secs / 60) % 60);
  f.second = static_cast<int>(secs % 60);
  f.has_time = rest != 0;
  return f;
}

std::string format_iso8601(std::int64_t micros, bool date_only, bool utc_designator) {
  const DateTimeFields f = fields_from_micros(micros);
  char buf[48];
  if (date_only) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", f.year, f.month, f.day);
    return buf;
  }
  if (f.microsecond != 0) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06d", f.year, f.month, f.day,
                  f.hour, f.minute, f.second, f.microsecond);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", f.year, f.month, f.day, f.hour,
                  f.minute, f.second);
  }
  return utc_designator ? std::string(buf) + "Z" : std::string(buf);
}

}  // namespace tft
