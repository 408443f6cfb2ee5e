// checkpoint.memory_budget: the size parser's accepted forms and edge cases (units, fractions,
// overflow, negative, zero, ambiguous units), its text form, the checkpoint section's reading
// of it in YAML and JSON (line numbers, the sub-layer defaults, the conflicts with a strategy
// and compressed boundaries) and round trips.
#include <cstdint>
#include <string>
#include <variant>

#include "checkpoint/checkpoint_config.h"
#include "checkpoint/checkpoint_config_io.h"
#include "checkpoint/checkpoint_config_json.h"
#include "checkpoint/memory_budget.h"
#include "common/error.h"

#include "support/cmocka_cpp.h"  // last: see the header

using tft::CheckpointConfig;
using tft::MemoryBudget;

namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

std::int64_t bytes_of(const std::string& text) {
  const auto parsed = tft::parse_memory_budget(text);
  if (const auto* reason = std::get_if<std::string>(&parsed)) {
    fail_msg("\"%s\": unexpected error: %s", text.c_str(), reason->c_str());
  }
  const MemoryBudget budget = std::get<MemoryBudget>(parsed);
  assert_false(budget.automatic);
  return budget.bytes;
}

void expect_refused(const std::string& text, const std::string& needle) {
  const auto parsed = tft::parse_memory_budget(text);
  const auto* reason = std::get_if<std::string>(&parsed);
  if (reason == nullptr) fail_msg("\"%s\" was accepted", text.c_str());
  if (reason->find(needle) == std::string::npos) {
    fail_msg("\"%s\": message \"%s\" lacks \"%s\"", text.c_str(), reason->c_str(), needle.c_str());
  }
}

}  // namespace

TFT_TEST(sizes_with_binary_units_and_bytes_are_read_exactly) {
  assert_int_equal(bytes_of("3.5GiB"), 7 * kGiB / 2);
  assert_int_equal(bytes_of("3.5 GiB"), 7 * kGiB / 2);
  assert_int_equal(bytes_of("900MiB"), 900 * kMiB);
  assert_int_equal(bytes_of("512KiB"), 512 * 1024);
  assert_int_equal(bytes_of("1TiB"), std::int64_t{1} << 40);
  assert_int_equal(bytes_of("4096B"), 4096);
  assert_int_equal(bytes_of("4096"), 4096);
  assert_int_equal(bytes_of("1"), 1);
  // Fractions round down to whole bytes: 0.1 KiB = 102.4 bytes.
  assert_int_equal(bytes_of("0.1KiB"), 102);
  assert_int_equal(bytes_of("1.000000000000000000001GiB"), kGiB);
  // The largest size there is, to the byte, and one beyond it.
  assert_int_equal(bytes_of("9223372036854775807"), INT64_MAX);
  assert_int_equal(bytes_of("8388607.99999999TiB"), INT64_MAX - 10995);
  const auto automatic = tft::parse_memory_budget("auto");
  assert_true(std::get<MemoryBudget>(automatic).automatic);
}

TFT_TEST(bad_sizes_say_what_is_wrong) {
  expect_refused("3.5GB",
                 "unknown unit 'GB' in \"3.5GB\": sizes take binary units (1 KiB = 1024 "
                 "bytes); did you mean 3.5GiB?");
  expect_refused("900 MB", "did you mean 900 MiB?");
  expect_refused("2G", "did you mean 2GiB?");
  expect_refused("64kb", "did you mean 64KiB?");
  expect_refused("1gib", "did you mean 1GiB?");
  expect_refused("3parsecs",
                 "unknown unit 'parsecs' in \"3parsecs\" (expected a size such as "
                 "3.5GiB or 900MiB (binary units B, KiB, MiB, GiB, TiB), a whole "
                 "number of bytes, or auto)");
  expect_refused("0MiB", "must be more than 0 bytes (got \"0MiB\")");
  expect_refused("0", "must be more than 0 bytes (got \"0\")");
  expect_refused("0.0000001KiB", "rounds down to 0 bytes");
  expect_refused("-1GiB", "must be more than 0 bytes (got \"-1GiB\")");
  expect_refused("1.5B", "a fraction of a byte in \"1.5B\"");
  expect_refused("1.5", "a fraction of a byte");
  expect_refused("9223372036854775808", "is too large (at most 2^63 - 1 bytes");
  expect_refused("8388608TiB", "is too large");
  expect_refused("99999999999999999999999GiB", "is too large");
  expect_refused("", "expected a size such as 3.5GiB");
  expect_refused("GiB", "expected a size such as 3.5GiB");
  expect_refused(".5GiB", "got \".5GiB\"");
  expect_refused("5.GiB", "got \"5.GiB\"");
  expect_refused("+5GiB", "got \"+5GiB\"");
  expect_refused("AUTO", "or auto, got \"AUTO\"");
  expect_refused("1e9", "unknown unit 'e9'");
}

TFT_TEST(the_text_form_reads_back_to_the_same_budget) {
  const auto text = [](std::int64_t bytes) {
    return tft::memory_budget_text(MemoryBudget::of_bytes(bytes));
  };
  assert_string_equal(text(7 * kGiB / 2).c_str(), "3584MiB");
  assert_string_equal(text(4 * kGiB).c_str(), "4GiB");
  assert_string_equal(text(1000000000).c_str(), "1000000000");
  assert_string_equal(text(3 * 1024).c_str(), "3KiB");
  assert_string_equal(tft::memory_budget_text(MemoryBudget::automatic_budget()).c_str(), "auto");
  for (const std::int64_t bytes : {std::int64_t{1}, std::int64_t{1023}, 5 * kMiB, INT64_MAX}) {
    assert_int_equal(bytes_of(text(bytes)), bytes);
  }
}

TFT_TEST(the_checkpoint_section_reads_a_budget) {
  const CheckpointConfig c = tft::checkpoint_config_from_yaml("memory_budget: 900MiB\n");
  assert_true(c.memory_budget.has_value());
  assert_int_equal(c.memory_budget->bytes, 900 * kMiB);
  // A budget may recompute attention units whole, as the planning strategy does.
  assert_true(c.checkpoint_attention && c.checkpoint_ffn);
  assert_true(tft::checkpoint_config_from_yaml("memory_budget: 900MiB\ncheckpoint_ffn: false\n")
                  .checkpoint_attention);
  assert_false(tft::checkpoint_config_from_yaml("memory_budget: 900MiB\ncheckpoint_ffn: false\n")
                   .checkpoint_ffn);
  assert_int_equal(
      tft::checkpoint_config_from_yaml("memory_budget: 1073741824\n").memory_budget->bytes, kGiB);
  assert_int_equal(tft::checkpoint_config_from_yaml("memory_budget: 1e9\n").memory_budget->bytes,
                   1000000000);
  assert_true(tft::checkpoint_config_from_yaml("memory_budget: auto\n").memory_budget->automatic);
  assert_int_equal(tft::checkpoint_config_from_json_string(R"({"memory_budget": "3.5GiB"})")
                       .memory_budget->bytes,
                   7 * kGiB / 2);
  assert_int_equal(
      tft::checkpoint_config_from_json_string(R"({"memory_budget": 4096})").memory_budget->bytes,
      4096);
  assert_string_equal(c.summary().c_str(),
                      "Checkpointing planned for a memory budget of 900.0 MiB");
  // The seed's formulas see strategy none.
  assert_true(c.memory_savings(6) == 0.0 && c.compute_overhead(6) == 1.0);
}

TFT_TEST(bad_budgets_in_the_section_name_line_key_and_value) {
  const auto yaml_error = [](const std::string& text, const std::string& needle) {
    TFT_ASSERT_THROWS_WITH(tft::checkpoint_config_from_yaml(text), tft::ConfigError, needle);
  };
  yaml_error("strategy: none\nmemory_budget: 3.5GB\n",
             "line 2: checkpoint.memory_budget: unknown unit 'GB' in \"3.5GB\"");
  yaml_error("memory_budget: 0\n",
             "line 1: checkpoint.memory_budget: must be more than 0 bytes (got 0)");
  yaml_error("memory_budget: -5\n",
             "line 1: checkpoint.memory_budget: must be more than 0 bytes (got -5)");
  yaml_error("memory_budget: -2.5\n", "must be more than 0 bytes (got -2.5)");
  yaml_error("memory_budget: 2.5\n",
             "line 1: checkpoint.memory_budget: not a whole number of bytes: 2.5");
  yaml_error("memory_budget: 1e30\n", "not a whole number of bytes");
  yaml_error("memory_budget: 9223372036854775808\n", "is too large (at most 2^63 - 1 bytes)");
  yaml_error("memory_budget: 99999999999999999999\n", "is too large");
  yaml_error("memory_budget: true\n", "expected a size such as 3.5GiB or 900MiB");
  yaml_error("memory_budget: [1]\n", "got a sequence");
  yaml_error("memory_budget:\n", "got null");
  yaml_error("strategy: dynamic\nnum_layers: 6\nmemory_fraction: 0.5\nmemory_budget: 1GiB\n",
             "line 4: checkpoint.memory_budget: give either strategy 'dynamic' (memory_fraction: "
             "a fraction of the un-checkpointed peak) or memory_budget (an absolute size), not "
             "both");
  yaml_error("strategy: uniform\ninterval: 1\nmemory_budget: 1GiB\n",
             "line 3: checkpoint.memory_budget: strategy 'uniform' fixes the units to "
             "checkpoint, and a budget plans them: give one of them");
  yaml_error("memory_budget: 1GiB\nboundary_dtype: int8\n",
             "line 2: checkpoint.boundary_dtype: with memory_budget the planner chooses the "
             "boundaries (float32, then bfloat16, then int8 only when float32 cannot fit)");
  TFT_ASSERT_THROWS_WITH(tft::checkpoint_config_from_json_string(R"({"memory_budget": "1 GB"})"),
                         tft::ConfigError, "checkpoint.memory_budget: unknown unit 'GB'");
  // Set directly, the field is checked by validate().
  CheckpointConfig direct;
  direct.memory_budget = MemoryBudget::of_bytes(-3);
  TFT_ASSERT_THROWS_WITH(direct.validate(), tft::ConfigError,
                         "checkpoint.memory_budget: must be more than 0 bytes (got -3)");
}

TFT_TEST(budgets_round_trip_through_yaml_and_json) {
  for (const MemoryBudget budget :
       {MemoryBudget::of_bytes(7 * kGiB / 2), MemoryBudget::of_bytes(1000000007),
        MemoryBudget::automatic_budget()}) {
    CheckpointConfig c =
        CheckpointConfig::none().with_checkpoint_attention(true).with_checkpoint_ffn(false);
    c.memory_budget = budget;
    const std::string yaml = tft::checkpoint_config_to_yaml(c);
    assert_true(tft::checkpoint_config_from_yaml(yaml) == c);
    assert_true(tft::checkpoint_config_from_json_string(tft::checkpoint_config_to_json_string(c)) ==
                c);
  }
  CheckpointConfig c;
  c.memory_budget = MemoryBudget::of_bytes(900 * kMiB);
  assert_string_equal(tft::checkpoint_config_to_yaml(c).c_str(),
                      "strategy: none\n"
                      "checkpoint_attention: false\n"
                      "checkpoint_ffn: false\n"
                      "min_checkpoint_interval: 1\n"
                      "memory_budget: 900MiB\n");
  // Two configs differing only in their budget differ.
  CheckpointConfig other = c;
  other.memory_budget = MemoryBudget::of_bytes(901 * kMiB);
  assert_true(other != c);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_with_binary_units_and_bytes_are_read_exactly),
      cmocka_unit_test(bad_sizes_say_what_is_wrong),
      cmocka_unit_test(the_text_form_reads_back_to_the_same_budget),
      cmocka_unit_test(the_checkpoint_section_reads_a_budget),
      cmocka_unit_test(bad_budgets_in_the_section_name_line_key_and_value),
      cmocka_unit_test(budgets_round_trip_through_yaml_and_json),
  };
  return cmocka_run_group_tests_name("memory_budget", tests, nullptr, nullptr);
}
