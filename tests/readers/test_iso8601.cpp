// ISO 8601 parsing: dates, date-times, fractions, Z and offsets, rejected forms, calendar
// helpers and formatting.
#include <cstdint>
#include <string>

#include "readers/iso8601.h"

#include "support/cmocka_cpp.h"

namespace {

constexpr std::int64_t kSec = 1000000;
constexpr std::int64_t kDay = 86400 * kSec;

std::int64_t micros(const char* text) {
  std::string why;
  const auto parsed = tft::parse_iso8601(text, &why);
  if (!parsed) fail_msg("\"%s\" did not parse: %s", text, why.c_str());
  return parsed->micros;
}

void expect_reject(const char* text, const char* reason) {
  std::string why;
  const auto parsed = tft::parse_iso8601(text, &why);
  if (parsed) fail_msg("\"%s\" parsed but should not", text);
  if (why.find(reason) == std::string::npos) {
    fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", text, why.c_str(), reason);
  }
}

}  // namespace

TFT_TEST(test_dates) {
  assert_true(micros("1970-01-01") == 0);
  assert_true(micros("1970-01-02") == kDay);
  assert_true(micros("2000-01-03") == 10959 * kDay);
  assert_true(micros("1969-12-31") == -kDay);
  assert_true(micros("2000-02-29") == micros("2000-02-28") + kDay);  // leap (divisible by 400)
  assert_true(micros("2024-03-01") == micros("2024-02-29") + kDay);
  const auto parsed = tft::parse_iso8601("2021-07-15");
  assert_true(parsed.has_value());
  assert_false(parsed->fields.has_time);
  assert_int_equal(parsed->fields.month, 7);
  assert_int_equal(parsed->fields.day, 15);
}

TFT_TEST(test_date_times_and_offsets) {
  const std::int64_t base = micros("2020-03-01");
  assert_true(micros("2020-03-01T14:30") == base + (14 * 3600 + 30 * 60) * kSec);
  assert_true(micros("2020-03-01 14:30:05") == base + (14 * 3600 + 30 * 60 + 5) * kSec);
  assert_true(micros("2020-03-01T14:30:05Z") == micros("2020-03-01T14:30:05"));
  assert_true(micros("2020-03-01T14:30:05.25Z") == micros("2020-03-01T14:30:05Z") + 250000);
  assert_true(micros("2020-03-01T14:30:05,123456789") ==
              micros("2020-03-01T14:30:05Z") + 123456);  // comma, cut to microseconds
  // Offsets: the instant is UTC; 14:30+01:00 is 13:30Z.
  assert_true(micros("2020-03-01T14:30:00+01:00") == micros("2020-03-01T13:30:00Z"));
  assert_true(micros("2020-03-01T14:30:00+0100") == micros("2020-03-01T13:30:00Z"));
  assert_true(micros("2020-03-01T14:30:00+01") == micros("2020-03-01T13:30:00Z"));
  assert_true(micros("2020-03-01T08:00:00-05:30") == micros("2020-03-01T13:30:00Z"));
  // Across a day boundary: the written fields stay local.
  const auto late = tft::parse_iso8601("2020-03-01T23:30:00-05:00");
  assert_true(late.has_value());
  assert_true(late->micros == micros("2020-03-02T04:30:00Z"));
  assert_int_equal(late->fields.day, 1);
  assert_int_equal(late->fields.hour, 23);
  assert_int_equal(late->fields.offset_minutes, -300);
  assert_true(late->fields.has_time);
}

TFT_TEST(test_rejected_forms) {
  expect_reject("2020-13-01", "month 13 is out of range");
  expect_reject("2020-00-10", "month 0 is out of range");
  expect_reject("2019-02-29", "day 29 does not exist in 2019-02");
  expect_reject("2100-02-29", "day 29 does not exist");  // not a leap year
  expect_reject("2020-04-31", "day 31 does not exist");
  expect_reject("2020-03-01T24:00", "hour 24 is out of range");
  expect_reject("2020-03-01T12:60", "minute 60 is out of range");
  expect_reject("2020-03-01T23:59:60Z", "second 60 is out of range");
  expect_reject("20200301", "expected a date YYYY-MM-DD");
  expect_reject("2020-W10", "expected a date YYYY-MM-DD");
  expect_reject("2020-061", "expected a date YYYY-MM-DD");
  expect_reject("n/a", "expected a date");
  expect_reject("", "expected a date");
  expect_reject("2020-03-01X", "expected 'T' or a space");
  expect_reject("2020-03-01T1", "expected a time hh:mm");
  expect_reject("2020-03-01T10:00:00.", "fraction digits");
  expect_reject("2020-03-01T10:00:00+1", "expected an offset");
  expect_reject("2020-03-01T10:00:00+25:00", "offset out of range");
  expect_reject("2020-03-01T10:00:00 UTC", "unexpected text");
  expect_reject("2020-03-01T10:00Zx", "unexpected text");
}

TFT_TEST(test_calendar_helpers) {
  assert_int_equal(tft::day_of_week(2000, 1, 3), 0);  // a Monday
  assert_int_equal(tft::day_of_week(1970, 1, 1), 3);  // a Thursday
  assert_int_equal(tft::day_of_week(2024, 2, 29), 3);
  assert_int_equal(tft::day_of_week(1969, 12, 28), 6);  // a Sunday before the epoch
  assert_true(tft::days_from_civil(2000, 3, 1) - tft::days_from_civil(2000, 2, 28) == 2);
}

TFT_TEST(test_formatting) {
  assert_string_equal(tft::format_iso8601(micros("2020-03-01"), true).c_str(), "2020-03-01");
  assert_string_equal(tft::format_iso8601(micros("2020-03-01T14:30:05+02:00"), false).c_str(),
                      "2020-03-01T12:30:05Z");
  assert_string_equal(tft::format_iso8601(micros("2020-03-01T14:30:05.5Z"), false).c_str(),
                      "2020-03-01T14:30:05.500000Z");
  assert_string_equal(tft::format_iso8601(-kSec, false).c_str(), "1969-12-31T23:59:59Z");
  for (const char* text : {"0001-01-01", "1600-02-29", "1999-12-31", "9999-12-31"}) {
    assert_string_equal(tft::format_iso8601(micros(text), true).c_str(), text);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dates),          cmocka_unit_test(test_date_times_and_offsets),
      cmocka_unit_test(test_rejected_forms), cmocka_unit_test(test_calendar_helpers),
      cmocka_unit_test(test_formatting),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
