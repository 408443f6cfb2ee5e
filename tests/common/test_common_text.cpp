// The text helpers of src/common that both config readers and the messages share: the YAML
// plain-scalar rules (common/yaml_scalar.h) and join / format_bytes (common/format.h).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/yaml_scalar.h"

#include "support/cmocka_cpp.h"

using tft::resolve_plain_scalar;
using tft::YamlKind;

TFT_TEST(test_null_and_bool_by_the_core_schema) {
  for (const char* text : {"", "~", "null", "Null", "NULL"}) {
    const tft::YamlScalar v = resolve_plain_scalar(text);
    assert_true(v.kind == YamlKind::Null);
    assert_string_equal(v.shown.c_str(), "null");
  }
  for (const char* text : {"true", "True", "TRUE"}) {
    const tft::YamlScalar v = resolve_plain_scalar(text);
    assert_true(v.kind == YamlKind::Bool && v.boolean);
  }
  assert_true(resolve_plain_scalar("False").kind == YamlKind::Bool);
  assert_false(resolve_plain_scalar("false").boolean);
  // YAML 1.1's booleans are strings in 1.2.
  for (const char* text : {"yes", "no", "on", "off", "tRUE"}) {
    const tft::YamlScalar v = resolve_plain_scalar(text);
    assert_true(v.kind == YamlKind::String);
    assert_string_equal(v.text.c_str(), text);
    assert_string_equal(v.shown.c_str(), ("\"" + std::string(text) + "\"").c_str());
  }
}

TFT_TEST(test_integers_to_the_ends_of_their_ranges) {
  tft::YamlScalar v = resolve_plain_scalar("18446744073709551615");  // UINT64_MAX
  assert_true(v.kind == YamlKind::UInt);
  assert_true(v.uint == std::numeric_limits<std::uint64_t>::max());
  v = resolve_plain_scalar("18446744073709551616");
  assert_true(v.kind == YamlKind::BigInt);
  assert_false(tft::is_negative_big_int(v));
  assert_true(v.number == 18446744073709551616.0);
  v = resolve_plain_scalar("+7");
  assert_true(v.kind == YamlKind::UInt && v.uint == 7 && v.number == 7.0);
  assert_string_equal(v.shown.c_str(), "+7");
  v = resolve_plain_scalar("-0");  // zero, not negative
  assert_true(v.kind == YamlKind::UInt && v.uint == 0);
  v = resolve_plain_scalar("-1");
  assert_true(v.kind == YamlKind::NegInt && v.sint == -1 && v.number == -1.0);
  v = resolve_plain_scalar("-9223372036854775808");  // INT64_MIN
  assert_true(v.kind == YamlKind::NegInt);
  assert_true(v.sint == std::numeric_limits<std::int64_t>::min());
  v = resolve_plain_scalar("-9223372036854775809");
  assert_true(v.kind == YamlKind::BigInt);
  assert_true(tft::is_negative_big_int(v));
  assert_string_equal(v.shown.c_str(), "-9223372036854775809");
  v = resolve_plain_scalar("-99999999999999999999999");  // beyond uint64 as well
  assert_true(v.kind == YamlKind::BigInt && tft::is_negative_big_int(v));
}

TFT_TEST(test_floats_infinities_and_nan) {
  for (const char* text : {"1.5", ".5", "5.", "1e3", "-2.5E-1", "+1.0"}) {
    assert_true(resolve_plain_scalar(text).kind == YamlKind::Float);
  }
  assert_true(resolve_plain_scalar("1e3").number == 1000.0);
  assert_true(resolve_plain_scalar("-2.5E-1").number == -0.25);
  assert_true(resolve_plain_scalar(".inf").number == std::numeric_limits<double>::infinity());
  assert_true(resolve_plain_scalar("-.Inf").number == -std::numeric_limits<double>::infinity());
  assert_true(std::isnan(resolve_plain_scalar(".NaN").number));
  // Not numbers by the core schema: strings.
  for (const char* text : {"1_000", "0x1F", "1e", "inf", "nan", "-.nan", "1.2.3", "e5"}) {
    assert_true(resolve_plain_scalar(text).kind == YamlKind::String);
  }
}

TFT_TEST(test_yaml_double_reads_back_as_a_float) {
  assert_string_equal(tft::yaml_double(1.0).c_str(), "1.0");
  assert_string_equal(tft::yaml_double(0.3).c_str(), "0.3");
  assert_string_equal(tft::yaml_double(1e-06).c_str(), "1e-06");
  assert_string_equal(tft::yaml_double(std::numeric_limits<double>::infinity()).c_str(), ".inf");
  assert_string_equal(tft::yaml_double(-std::numeric_limits<double>::infinity()).c_str(), "-.inf");
  assert_string_equal(tft::yaml_double(std::nan("")).c_str(), ".nan");
  for (const double value : {1.0, 0.1, 2.5e-7, 1e300, -3.0}) {
    const tft::YamlScalar v = resolve_plain_scalar(tft::yaml_double(value));
    assert_true(v.kind == YamlKind::Float && v.number == value);
  }
}

TFT_TEST(test_join_and_format_bytes) {
  assert_string_equal(tft::join({}).c_str(), "");
  assert_string_equal(tft::join({"a"}).c_str(), "a");
  assert_string_equal(tft::join({"a", "b", "c"}).c_str(), "a, b, c");
  assert_string_equal(tft::join({"a", "b"}, " | ").c_str(), "a | b");
  assert_string_equal(tft::format_bytes(512).c_str(), "512 B");
  assert_string_equal(tft::format_bytes(3 * 1024).c_str(), "3 KiB");
  assert_string_equal(tft::format_bytes(5 * 1024 * 1024 + 512 * 1024).c_str(), "5.5 MiB");
  assert_string_equal(tft::format_bytes(3LL << 30).c_str(), "3.00 GiB");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_and_bool_by_the_core_schema),
      cmocka_unit_test(test_integers_to_the_ends_of_their_ranges),
      cmocka_unit_test(test_floats_infinities_and_nan),
      cmocka_unit_test(test_yaml_double_reads_back_as_a_float),
      cmocka_unit_test(test_join_and_format_bytes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
