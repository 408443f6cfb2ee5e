// The budget planner's choice (checkpoint/planner.h): the cheapest chunks of units that fit a
// memory budget, under the planner's linear model of partial checkpointing. Hand-made cost
// tables where the right answer is known, and random tables checked against brute force.
#include "checkpoint/planner.h"
#include "common/error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::CheckpointChoice;
using tft::choose_checkpoint_chunks;
using tft::UnitCost;

namespace {

// baseline 100, whole units only: a saves 50 for 5 s, b 30 for 1 s, c 30 for 1 s, d 5 for 0.1 s.
std::vector<UnitCost> whole_units() {
  return {{"a", 1, 50, 5.0}, {"b", 1, 30, 1.0}, {"c", 1, 30, 1.0}, {"d", 1, 5, 0.1}};
}

using Chunks = std::vector<std::int64_t>;

// One combination of chunk counts, with its linear savings and time.
struct Plan {
  Chunks chunks;
  std::int64_t saved = 0;
  double seconds = 0.0;
};

// Brute force: every combination of chunk counts (a unit that saves nothing only at 0, as the
// planner tries it), its sums added in unit order.
std::vector<Plan> every_plan(const std::vector<UnitCost>& units) {
  std::vector<Plan> plans;
  Chunks current(units.size(), 0);
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    if (i == units.size()) {
      Plan p{current};
      for (std::size_t u = 0; u < units.size(); ++u) {
        p.saved += tft::partial_saved_bytes(units[u], current[u]);
        p.seconds += tft::partial_recompute_seconds(units[u], current[u]);
      }
      plans.push_back(std::move(p));
      return;
    }
    for (std::int64_t k = 0; k <= units[i].chunks; ++k) {
      if (k > 0 && units[i].saved_bytes <= 0) break;
      current[i] = k;
      visit(i + 1);
    }
    current[i] = 0;
  };
  visit(0);
  return plans;
}

}  // namespace

TFT_TEST(cheapest_set_of_whole_units_within_the_budget) {
  // Budget 40 (save 60): b + c saves 60 for 2 s; a + anything costs more than 5 s.
  auto choice = choose_checkpoint_chunks(whole_units(), 100, 40);
  assert_true(choice.fits);
  assert_true((choice.checkpointed_chunks == Chunks{0, 1, 1, 0}));
  assert_int_equal(choice.predicted_peak_bytes, 40);
  assert_true(choice.predicted_recompute_seconds == 2.0);

  // Budget 35 (save 65): b + c + d (65 for 2.1 s) beats a + b (80 for 6 s).
  choice = choose_checkpoint_chunks(whole_units(), 100, 35);
  assert_true((choice.checkpointed_chunks == Chunks{0, 1, 1, 1}));
  assert_int_equal(choice.predicted_peak_bytes, 35);

  // Budget 30 (save 70): only sets with a do it; a + b (or a + c) at 6 s.
  choice = choose_checkpoint_chunks(whole_units(), 100, 30);
  assert_true(choice.fits);
  assert_int_equal(choice.checkpointed_chunks[0], 1);
  assert_int_equal(choice.checkpointed_chunks[1] + choice.checkpointed_chunks[2], 1);
  assert_true(choice.predicted_recompute_seconds == 6.0);
}

TFT_TEST(part_of_a_unit_meets_a_budget_a_whole_unit_overshoots) {
  // baseline 1000: "big" saves 800 over 8 chunks for 8 s (100 bytes and 1 s a chunk), "small"
  // saves 100 for 2 s. Budget 500 (save 500): 5 chunks of big (5 s) beat 4 chunks + small (6 s).
  const std::vector<UnitCost> units{{"big", 8, 800, 8.0}, {"small", 1, 100, 2.0}};
  auto choice = choose_checkpoint_chunks(units, 1000, 500);
  assert_true(choice.fits);
  assert_true((choice.checkpointed_chunks == Chunks{5, 0}));
  assert_int_equal(choice.predicted_peak_bytes, 500);
  assert_true(choice.predicted_recompute_seconds == 5.0);
  // Budget 150 (save 850): all of big and nothing fits without small: 8 + small = 10 s.
  choice = choose_checkpoint_chunks(units, 1000, 150);
  assert_true((choice.checkpointed_chunks == Chunks{8, 1}));
  // A cheap small unit is taken first: at 0.5 s for 100 bytes it beats a chunk of big.
  const std::vector<UnitCost> cheap_small{{"big", 8, 800, 8.0}, {"small", 1, 100, 0.5}};
  choice = choose_checkpoint_chunks(cheap_small, 1000, 500);
  assert_true((choice.checkpointed_chunks == Chunks{4, 1}));
  assert_true(choice.predicted_recompute_seconds == 4.5);
}

// A unit touched at all runs in its chunks instead of whole: chunking_seconds, once per unit.
TFT_TEST(the_price_of_running_in_chunks_is_paid_once_per_unit_touched) {
  // Two units alike: 4 chunks, 400 bytes, 4 s (1 s a chunk). Budget 600 of 1000 (save 400).
  std::vector<UnitCost> units{{"a", 4, 400, 4.0}, {"b", 4, 400, 4.0}};
  auto choice = choose_checkpoint_chunks(units, 1000, 600);
  assert_true(choice.fits);
  assert_int_equal(choice.checkpointed_chunks[0] + choice.checkpointed_chunks[1], 4);
  // Running in chunks costs 3 s a unit: one whole unit (4 + 3 s) beats two halves (4 + 6 s).
  for (UnitCost& u : units) u.chunking_seconds = 3.0;
  choice = choose_checkpoint_chunks(units, 1000, 600);
  assert_true((choice.checkpointed_chunks == Chunks{4, 0}) ||
              (choice.checkpointed_chunks == Chunks{0, 4}));
  assert_true(choice.predicted_recompute_seconds == 7.0);
  assert_true(tft::partial_recompute_seconds(units[0], 0) == 0.0);
  assert_true(tft::partial_recompute_seconds(units[0], 1) == 4.0);
  assert_true(tft::partial_recompute_seconds(units[0], 4) == 7.0);
}

TFT_TEST(a_budget_above_the_baseline_checkpoints_nothing) {
  const auto choice = choose_checkpoint_chunks(whole_units(), 100, 100);
  assert_true(choice.fits);
  assert_true((choice.checkpointed_chunks == Chunks{0, 0, 0, 0}));
  assert_int_equal(choice.predicted_peak_bytes, 100);
  assert_true(choice.predicted_recompute_seconds == 0.0);
}

TFT_TEST(an_unreachable_budget_gives_the_lowest_peak_and_says_so) {
  std::vector<UnitCost> units = whole_units();
  units.push_back({"useless", 4, -2, 0.5});  // measured noise: checkpointing it costs memory
  units[0].chunks = 4;
  const auto choice = choose_checkpoint_chunks(units, 200, 50);  // at best 200 - 115 = 85
  assert_false(choice.fits);
  assert_true((choice.checkpointed_chunks == Chunks{4, 1, 1, 1, 0}));
  assert_int_equal(choice.predicted_peak_bytes, 85);
}

TFT_TEST(ties_in_time_go_to_the_larger_saving) {
  const std::vector<UnitCost> units = {{"x", 2, 10, 0.0}, {"y", 1, 20, 0.0}};
  const auto choice = choose_checkpoint_chunks(units, 100, 95);
  assert_true((choice.checkpointed_chunks == Chunks{2, 1}));  // free: take all savings
}

TFT_TEST(units_with_many_chunks_are_planned_in_even_steps) {
  const std::vector<UnitCost> units{{"long", 100, 1000, 10.0}};
  const auto choice = choose_checkpoint_chunks(units, 1000, 500);
  // Options are s * 100 / 32 chunks for s = 1..32 (3, 6, 9, 12, 15, 18, 21, 25, ...): 15 steps
  // make 46 chunks (460 bytes), 16 make 50 (exactly 500).
  assert_true((choice.checkpointed_chunks == Chunks{50}));
  assert_true(choice.fits);
}

TFT_TEST(a_unit_with_no_chunks_is_an_error) {
  const std::vector<UnitCost> units{{"broken", 0, 10, 1.0}};
  TFT_ASSERT_THROWS_WITH(choose_checkpoint_chunks(units, 100, 50), tft::ConfigError,
                         "unit broken has 0 chunks");
}

TFT_TEST(random_tables_match_brute_force) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> chunk_count(1, 4), unit_count(1, 5);
  std::uniform_int_distribution<std::int64_t> bytes(-5, 400);
  std::uniform_real_distribution<double> seconds(0.0, 3.0);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<UnitCost> units(static_cast<std::size_t>(unit_count(rng)));
    std::int64_t total = 0;
    for (UnitCost& u : units) {
      u = {"u", chunk_count(rng), bytes(rng), seconds(rng)};
      if (trial % 2 == 1) u.chunking_seconds = seconds(rng);
      total += std::max<std::int64_t>(0, u.saved_bytes);
    }
    const std::int64_t baseline = 2000;
    std::uniform_int_distribution<std::int64_t> saving(0, total);
    const std::int64_t budget = baseline - saving(rng);
    double best_seconds = -1.0;  // the cheapest plan that fits; ties to the larger saving
    std::int64_t best_saved = 0;
    for (const Plan& p : every_plan(units)) {
      if (baseline - p.saved > budget) continue;
      if (best_seconds < 0 || p.seconds < best_seconds ||
          (p.seconds == best_seconds && p.saved > best_saved)) {
        best_seconds = p.seconds;
        best_saved = p.saved;
      }
    }
    const CheckpointChoice choice = choose_checkpoint_chunks(units, baseline, budget);
    assert_true(choice.fits);  // the budget is at most everything the units save
    assert_true(choice.predicted_peak_bytes <= budget);
    // The planner's time equals the optimum up to the order its sums were added in.
    assert_true(std::abs(choice.predicted_recompute_seconds - best_seconds) < 1e-9);
  }
}

TFT_TEST(backward_reruns_raise_the_prediction_where_little_is_freed_before_them) {
  // Baseline 1000. "first" keeps 400 un-checkpointed and saves 300 over 2 chunks; "last" keeps
  // 200 and saves 200 in 1 chunk, with 50 bytes of forward temporaries.
  std::vector<UnitCost> units{{"first", 2, 300, 1.0}, {"last", 1, 200, 1.0}};
  units[0].held_bytes = 400;
  units[1].held_bytes = 200;
  units[1].workspace_bytes = 50;
  using tft::predicted_peak_with_recompute;
  // Nothing checkpointed: the linear prediction.
  assert_int_equal(predicted_peak_with_recompute(units, {0, 0}, 1000), 1000);
  // "last" checkpointed: linear 800; its rerun comes first in backward, nothing freed yet:
  // 800 + its 200 + 50 temporaries.
  assert_int_equal(predicted_peak_with_recompute(units, {0, 1}, 1000), 1050);
  // "first" wholly checkpointed: linear 700; by its rerun "last" freed its 200: 700 - 200 +
  // one chunk (150) = 650, under the linear 700.
  assert_int_equal(predicted_peak_with_recompute(units, {2, 0}, 1000), 700);
  // Half of "first" (its first chunk): linear 850; its second chunk's 150 and "last"'s 200
  // are freed before the rerun: 850 - 200 - 150 + 150 = 650.
  assert_int_equal(predicted_peak_with_recompute(units, {1, 0}, 1000), 850);
  // Both: linear 500; last's rerun 500 + 250 = 750; first's 500 - 0 (last kept nothing
  // beyond what it saved) + 150 = 650.
  assert_int_equal(predicted_peak_with_recompute(units, {2, 1}, 1000), 750);
  // Units without held or workspace bytes (unknown) still count a chunk per rerun.
  const std::vector<UnitCost> bare{{"a", 4, 400, 1.0}};
  assert_int_equal(predicted_peak_with_recompute(bare, {4}, 1000), 700);
}

// The rerun-aware choice against brute force: over every combination of chunk counts, the plans
// no other saves at least as much as for no more time (the linear front, found here by
// comparing every pair); the choice must be the cheapest of them whose peak with backward's
// reruns fits, and when none fits, say so.
TFT_TEST(rerun_aware_choice_is_the_cheapest_front_plan_that_fits) {
  std::mt19937 rng(2468);
  std::uniform_int_distribution<int> chunk_count(1, 4), unit_count(1, 4);
  std::uniform_int_distribution<std::int64_t> bytes(1, 300), extra(0, 120);
  std::uniform_real_distribution<double> seconds(0.1, 3.0);
  int chose_off_the_linear_choice = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<UnitCost> units(static_cast<std::size_t>(unit_count(rng)));
    std::int64_t total = 0;
    for (UnitCost& u : units) {
      u = {"u", chunk_count(rng), bytes(rng), seconds(rng)};
      u.held_bytes = u.saved_bytes + extra(rng);
      u.workspace_bytes = extra(rng);
      total += u.saved_bytes;
    }
    const std::int64_t baseline = 2000;
    std::uniform_int_distribution<std::int64_t> saving(0, total);
    const std::int64_t budget = baseline - saving(rng);
    const std::vector<Plan> plans = every_plan(units);
    double best = -1.0;  // the cheapest front plan that fits with its reruns
    for (const Plan& p : plans) {
      const bool dominated = std::any_of(plans.begin(), plans.end(), [&](const Plan& q) {
        return q.saved >= p.saved && q.seconds <= p.seconds &&
               (q.saved > p.saved || q.seconds < p.seconds - 1e-12);
      });
      if (dominated || tft::predicted_peak_with_recompute(units, p.chunks, baseline) > budget) {
        continue;
      }
      if (best < 0 || p.seconds < best) best = p.seconds;
    }
    const CheckpointChoice choice =
        tft::choose_checkpoint_chunks_with_recompute(units, baseline, budget);
    assert_int_equal(choice.predicted_peak_bytes, tft::predicted_peak_with_recompute(
                                                      units, choice.checkpointed_chunks, baseline));
    if (best < 0) {
      assert_false(choice.fits);
      continue;
    }
    assert_true(choice.fits);
    assert_true(choice.predicted_peak_bytes <= budget);
    assert_true(std::abs(choice.predicted_recompute_seconds - best) < 1e-9);
    if (!(choice == choose_checkpoint_chunks(units, baseline, budget))) {
      ++chose_off_the_linear_choice;
    }
  }
  // The reruns matter in these tables: some choices differ from the linear one.
  assert_true(chose_off_the_linear_choice > 0);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cheapest_set_of_whole_units_within_the_budget),
      cmocka_unit_test(part_of_a_unit_meets_a_budget_a_whole_unit_overshoots),
      cmocka_unit_test(the_price_of_running_in_chunks_is_paid_once_per_unit_touched),
      cmocka_unit_test(a_budget_above_the_baseline_checkpoints_nothing),
      cmocka_unit_test(an_unreachable_budget_gives_the_lowest_peak_and_says_so),
      cmocka_unit_test(ties_in_time_go_to_the_larger_saving),
      cmocka_unit_test(units_with_many_chunks_are_planned_in_even_steps),
      cmocka_unit_test(a_unit_with_no_chunks_is_an_error),
      cmocka_unit_test(random_tables_match_brute_force),
      cmocka_unit_test(backward_reruns_raise_the_prediction_where_little_is_freed_before_them),
      cmocka_unit_test(rerun_aware_choice_is_the_cheapest_front_plan_that_fits),
  };
  return cmocka_run_group_tests_name("planner", tests, nullptr, nullptr);
}
