// data.target_normalizer.center auto (train/center_selection.h): the pilots end to end, and the
// rule that turns their scores and the seasonal naive's into a choice.
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/forecast.h"
#include "train/center_selection.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TrainConfig;
using tft::Trainer;
using tft::TrainReport;
using namespace tft::testing;

using tft::SeasonEvidence;
using tft::TargetCenter;
using tft::TargetChoice;
using tft::TargetScope;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// An hourly set's candidates: last, seasonal one day and one week back, statistic per series.
std::vector<TargetChoice> hourly_options() {
  return {{TargetScope::Encoder, TargetCenter::Last, 0},
          {TargetScope::Encoder, TargetCenter::Seasonal, 24},
          {TargetScope::Encoder, TargetCenter::Seasonal, 168},
          {TargetScope::Series, TargetCenter::Statistic, 0}};
}

// The seasonal naive over the training part: the week beats the day.
std::vector<SeasonEvidence> naive_prefers_the_week() { return {{24, 0.13}, {168, 0.08}}; }

}  // namespace

// Center auto (and scope auto, the defaults) chooses by pilot fits on the training part: the
// reason names every candidate's score, the pilots write nothing, and the trainer then runs
// bitwise like one configured with the winner (the pilots leave its generators alone).
TFT_TEST(test_center_auto_chooses_by_pilot_fits) {
  const fs::path dir = scratch_dir("center_auto");
  write_text(dir / "data.csv", synthetic_csv());
  TrainConfig c = synthetic_config(dir / "data.csv", dir / "auto");
  c.training.epochs = 3;
  c.model.seasonality = 12;  // the sine's period: seasonal is a candidate too
  assert_true(c.data.target_normalizer.center == tft::TargetCenter::Auto);
  assert_true(c.data.target_normalizer.scope == tft::TargetScope::Auto);
  Trainer chosen(c);
  assert_false(fs::exists(dir / "auto"));  // the pilots wrote nothing
  const std::string& reason = chosen.dataset().target_center_reason();
  assert_true(reason.rfind("auto: pilot fits on the training part's last rows", 0) == 0);
  for (const char* candidate : {"last ", "seasonal (12 rows) ", "statistic (scope series) "}) {
    if (reason.find(candidate) == std::string::npos)
      fail_msg("%s lacks %s", reason.c_str(), candidate);
  }
  assert_true(reason.find(" won (") != std::string::npos);
  const tft::TargetNormalizerConfig won = chosen.dataset().transforms().target_normalizer;
  assert_true(won.center != tft::TargetCenter::Auto && won.scope != tft::TargetScope::Auto);

  TrainConfig fixed = c;
  fixed.data.target_normalizer.center = won.center;
  fixed.data.target_normalizer.scope = won.scope;
  fixed.output.directory = (dir / "fixed").string();
  Trainer configured(fixed);
  assert_string_equal(configured.dataset().target_center_reason().c_str(), "configured");
  const TrainReport a = chosen.train();
  const TrainReport b = configured.train();
  assert_true(a.best_validation_loss == b.best_validation_loss);
  assert_true(same_weights(chosen.model(), configured.model()));
  assert_true(forecasts_bitwise_equal(chosen.predict(), configured.predict()));
  // The saved model keeps the choice, never auto.
  const nlohmann::json saved =
      nlohmann::json::parse(read_text(dir / "auto" / "model" / "transforms.json"));
  assert_string_equal(saved["target_normalizer"]["center"].get<std::string>().c_str(),
                      tft::to_string(won.center));
  assert_string_equal(saved["target_normalizer"]["scope"].get<std::string>().c_str(),
                      tft::to_string(won.scope));
  // The summary names both halves of the choice, as the reason does.
  const nlohmann::json summary = nlohmann::json::parse(read_text(dir / "auto" / "summary.json"));
  assert_string_equal(summary["target_center"]["center"].get<std::string>().c_str(),
                      tft::to_string(won.center));
  assert_string_equal(summary["target_center"]["scope"].get<std::string>().c_str(),
                      tft::to_string(won.scope));

  // Scope series leaves statistic alone: no pilot.
  TrainConfig series = c;
  series.data.target_normalizer.scope = tft::TargetScope::Series;
  series.training.epochs = 1;
  assert_string_equal(Trainer(series).dataset().target_center_reason().c_str(),
                      "auto: scope series");
  fs::remove_all(dir);
}

// The rule apart from the fits: the best pilot picks the family, the seasonal naive the season
// (among the seasons whose pilot finished); a diverged pilot never wins.
TFT_TEST(test_center_rule_takes_the_family_from_pilots_and_the_season_from_the_naive) {
  const std::vector<TargetChoice> options = hourly_options();
  const std::vector<SeasonEvidence> week_wins = naive_prefers_the_week();
  // The day's pilot is the best: seasonal wins, at the week the naive prefers.
  std::optional<TargetChoice> c =
      tft::choose_by_evidence(options, {0.36, 0.12, 0.13, 0.31}, week_wins);
  assert_true(c && c->center == TargetCenter::Seasonal && c->season == 168);
  assert_true(c->scope == TargetScope::Encoder);
  // Statistic's pilot beats every season's: the naive does not matter.
  c = tft::choose_by_evidence(options, {0.36, 0.20, 0.21, 0.19}, week_wins);
  assert_true(c && c->center == TargetCenter::Statistic && c->scope == TargetScope::Series);
  // The week's pilot diverged: the season falls back to one whose pilot finished.
  c = tft::choose_by_evidence(options, {0.36, 0.12, kNaN, 0.31}, week_wins);
  assert_true(c && c->season == 24);
  // No naive score (NaN, or none given): the pilot's own season.
  c = tft::choose_by_evidence(options, {0.36, 0.12, 0.13, 0.31}, {{24, kNaN}, {168, kNaN}});
  assert_true(c && c->season == 24);
  c = tft::choose_by_evidence(options, {0.36, 0.14, 0.13, 0.31}, {});
  assert_true(c && c->season == 168);
  // Within 1% of the best is a tie, and a tie goes to statistic; 2% behind is not a tie.
  c = tft::choose_by_evidence(options, {0.0316, 0.05, 0.05, 0.0317}, week_wins);
  assert_true(c && c->center == TargetCenter::Statistic);
  c = tft::choose_by_evidence(options, {0.0316, 0.05, 0.05, 0.0323}, week_wins);
  assert_true(c && c->center == TargetCenter::Last);
  // Every pilot diverged: no choice.
  assert_false(tft::choose_by_evidence(options, {kNaN, kNaN, kNaN, kNaN}, week_wins).has_value());
  TFT_ASSERT_THROWS_WITH(tft::choose_by_evidence(options, {0.1}, {}), std::invalid_argument,
                         "one pilot score per option");
}

// Who runs the longer pilots: each family's best first pilot, for the families within
// kLongerPilotMargin of the best; nobody when one family is clearly ahead. Then the longer
// scores pick the family, and the first round (the naive, for seasonal) picks within it.
TFT_TEST(test_center_longer_pilots_go_to_the_close_families) {
  const std::vector<TargetChoice> options = hourly_options();
  const std::vector<SeasonEvidence> week_wins = naive_prefers_the_week();
  const double margin = 1.0 + tft::kLongerPilotMargin;
  // Seasonal ahead by 11% and 12% (multiseries.yaml, seed 3): all three families run again,
  // seasonal at the season its pilots preferred.
  const std::vector<double> first{0.1190, 0.1072, 0.1100, 0.1206};
  std::vector<TargetChoice> c = tft::contenders_for_longer_pilots(options, first);
  assert_int_equal(c.size(), 3);
  assert_true(c[0].center == TargetCenter::Last);
  assert_true(c[1].center == TargetCenter::Seasonal && c[1].season == 24);
  assert_true(c[2].center == TargetCenter::Statistic && c[2].scope == TargetScope::Series);
  // The longer pilots rank statistic first: it wins.
  std::optional<TargetChoice> won =
      tft::choose_after_longer_pilots(options, first, c, {0.0651, 0.1012, 0.0639}, week_wins);
  assert_true(won && won->center == TargetCenter::Statistic && won->scope == TargetScope::Series);
  // Seasonal first again: the naive's season (the week), not the day its pilots preferred.
  won = tft::choose_after_longer_pilots(options, first, c, {0.0651, 0.0500, 0.0639}, week_wins);
  assert_true(won && won->center == TargetCenter::Seasonal && won->season == 168);
  // A tie goes to statistic, as in the first round.
  won = tft::choose_after_longer_pilots(options, first, c, {0.0500, 0.0700, 0.0503}, week_wins);
  assert_true(won && won->center == TargetCenter::Statistic);
  // Every longer pilot diverged: no choice from this round.
  assert_false(tft::choose_after_longer_pilots(options, first, c, {kNaN, kNaN, kNaN}, week_wins)
                   .has_value());
  // An hourly panel: seasonal far ahead of the others: the first round decides.
  assert_true(tft::contenders_for_longer_pilots(options, {0.38, 0.14, 0.127, 0.33}).empty());
  // The margin's edge: just inside runs again, just outside does not.
  c = tft::contenders_for_longer_pilots(options, {0.5, 0.1, 0.5, 0.1 * margin * 0.999});
  assert_int_equal(c.size(), 2);
  assert_true(c[0].center == TargetCenter::Seasonal && c[0].season == 24);
  assert_true(c[1].center == TargetCenter::Statistic);
  assert_true(
      tft::contenders_for_longer_pilots(options, {0.5, 0.1, 0.5, 0.1 * margin * 1.001}).empty());
  // A diverged pilot is never close; nothing finite: nobody.
  c = tft::contenders_for_longer_pilots(options, {0.1, kNaN, kNaN, 0.101});
  assert_int_equal(c.size(), 2);
  assert_true(c[0].center == TargetCenter::Last && c[1].center == TargetCenter::Statistic);
  assert_true(tft::contenders_for_longer_pilots(options, {kNaN, kNaN, kNaN, kNaN}).empty());
  TFT_ASSERT_THROWS_WITH(tft::contenders_for_longer_pilots(options, {0.1}), std::invalid_argument,
                         "one pilot score per option");
  TFT_ASSERT_THROWS_WITH(tft::choose_after_longer_pilots(options, first, c, {0.1}, week_wins),
                         std::invalid_argument, "one pilot score per option");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_center_auto_chooses_by_pilot_fits),
      cmocka_unit_test(test_center_rule_takes_the_family_from_pilots_and_the_season_from_the_naive),
      cmocka_unit_test(test_center_longer_pilots_go_to_the_close_families),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
