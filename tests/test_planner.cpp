// The budget planner's choice (checkpoint/planner.h): an exact 0/1 knapsack over measured
// unit costs. Hand-made cost tables where the right answer is known.
#include "checkpoint/planner.h"
#include "common/error.h"

#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::choose_checkpoint_units;
using tft::UnitCost;

namespace {

// baseline 100: a saves 50 for 5 s, b 30 for 1 s, c 30 for 1 s, d 5 for 0.1 s.
std::vector<UnitCost> table() {
  return {{"a", 50, 5.0}, {"b", 30, 1.0}, {"c", 30, 1.0}, {"d", 5, 0.1}};
}

}  // namespace

TFT_TEST(cheapest_set_within_the_budget) {
  // Budget 40 (save 60): b + c saves 60 for 2 s; a + anything costs more than 5 s.
  auto choice = choose_checkpoint_units(table(), 100, 40);
  assert_true(choice.fits);
  assert_true((choice.units == std::vector<std::size_t>{1, 2}));
  assert_int_equal(choice.predicted_peak_bytes, 40);
  assert_true(choice.predicted_recompute_seconds == 2.0);

  // Budget 35 (save 65): b + c + d (65 for 2.1 s) beats a + b (80 for 6 s).
  choice = choose_checkpoint_units(table(), 100, 35);
  assert_true((choice.units == std::vector<std::size_t>{1, 2, 3}));
  assert_int_equal(choice.predicted_peak_bytes, 35);

  // Budget 30 (save 70): only sets with a do it; a + b (or a + c) at 6 s.
  choice = choose_checkpoint_units(table(), 100, 30);
  assert_true(choice.fits);
  assert_int_equal(choice.units.size(), 2);
  assert_int_equal(choice.units[0], 0);
  assert_true(choice.predicted_recompute_seconds == 6.0);
}

TFT_TEST(a_budget_above_the_baseline_checkpoints_nothing) {
  const auto choice = choose_checkpoint_units(table(), 100, 100);
  assert_true(choice.fits);
  assert_true(choice.units.empty());
  assert_int_equal(choice.predicted_peak_bytes, 100);
  assert_true(choice.predicted_recompute_seconds == 0.0);
}

TFT_TEST(an_unreachable_budget_gives_the_lowest_peak_and_says_so) {
  std::vector<UnitCost> units = table();
  units.push_back({"useless", -2, 0.5});  // measured noise: checkpointing it costs memory
  const auto choice = choose_checkpoint_units(units, 200, 50);  // at best 200 - 115 = 85
  assert_false(choice.fits);
  assert_true((choice.units == std::vector<std::size_t>{0, 1, 2, 3}));
  assert_int_equal(choice.predicted_peak_bytes, 85);
}

TFT_TEST(ties_in_time_go_to_the_larger_saving) {
  const std::vector<UnitCost> units = {{"x", 10, 0.0}, {"y", 20, 0.0}};
  const auto choice = choose_checkpoint_units(units, 100, 95);
  assert_true((choice.units == std::vector<std::size_t>{0, 1}));  // free: take all savings
}

TFT_TEST(too_many_units_is_an_error_not_a_hang) {
  const std::vector<UnitCost> units(25, UnitCost{"u", 1, 1.0});
  bool threw = false;
  try {
    choose_checkpoint_units(units, 100, 50);
  } catch (const tft::ConfigError& e) {
    threw = std::string(e.what()).find("25 units") != std::string::npos;
  }
  assert_true(threw);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cheapest_set_within_the_budget),
      cmocka_unit_test(a_budget_above_the_baseline_checkpoints_nothing),
      cmocka_unit_test(an_unreachable_budget_gives_the_lowest_peak_and_says_so),
      cmocka_unit_test(ties_in_time_go_to_the_larger_saving),
      cmocka_unit_test(too_many_units_is_an_error_not_a_hang),
  };
  return cmocka_run_group_tests_name("planner", tests, nullptr, nullptr);
}
