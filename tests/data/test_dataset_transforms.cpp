// TimeSeriesDataset transforms: scaling fitted on the training part only (per series, global,
// none), the scaler and categorical encoder on their own (round trips, the unknown bucket),
// and serialised transforms applied to new data.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/train_config.h"
#include "data/categorical_encoder.h"
#include "data/scaler.h"
#include "data/seasonality.h"
#include "data/target_normalizer.h"
#include "data/time_series_dataset.h"

#include "dataset_support.h"
#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using namespace tft_test;

// ---------------------------------------------------------------------------------------
// Scaling and encoders

TFT_TEST(test_scaling_fitted_on_training_part_only) {
  TrainConfig c = base_config();
  c.split.validation_steps = 2;
  c.data.unknown_reals = {"x"};
  std::string a = "g,t,y,x\n";
  std::string b = a;
  for (int t = 0; t < 8; ++t) {
    const double y = t < 6 ? 2.0 * t : 1000.0 + t;  // validation values are extreme
    a += "A," + std::to_string(t) + "," + std::to_string(y) + ",1\n";
    b += "A," + std::to_string(t) + "," + std::to_string(t < 6 ? y : -5000.0) + ",1\n";
  }
  const TimeSeriesDataset da = load(a, c);
  const TimeSeriesDataset db = load(b, c);
  const tft::ScalerStats s = da.target_stats(0);
  // y over t = 0..5: 0, 2, 4, 6, 8, 10: mean 5, population std sqrt(35/3).
  assert_true(std::fabs(s.mean - 5.0) < 1e-12);
  assert_true(std::fabs(s.scale - std::sqrt(35.0 / 3.0)) < 1e-12);
  assert_true(da.transforms().scaler == db.transforms().scaler);  // validation values unused
  // A constant column gets scale 1.
  const std::size_t x = *da.transforms().scaler.column_index("x");
  assert_true(da.transforms().scaler.stats(0, x).scale == 1.0);
  assert_true(da.transforms().scaler.stats(0, x).mean == 1.0);

  // Global scaling: one row over the training parts of all series.
  c.data.scaling = tft::ScalingMode::Global;
  c.data.unknown_reals.clear();
  c.split.validation_steps = 0;
  const TimeSeriesDataset g = load(two_series(), c);
  assert_int_equal(g.transforms().scaler.num_groups(), 0);
  const tft::ScalerStats gs = g.target_stats(1);
  assert_true(std::fabs(gs.mean - (15.0 + 150.0) / 12.0) < 1e-9);
  c.data.scaling = tft::ScalingMode::None;
  const TimeSeriesDataset none = load(two_series(), c);
  assert_true(none.target_stats(1).mean == 0.0 && none.target_stats(1).scale == 1.0);
}

TFT_TEST(test_scaler_round_trip) {
  const std::vector<float> v = {1, 2, 3, 4};
  const tft::ScalerStats s = tft::compute_stats(v.data(), v.size());
  assert_true(std::fabs(s.mean - 2.5) < 1e-12);
  assert_true(std::fabs(s.scale - std::sqrt(1.25)) < 1e-12);
  const tft::StandardScaler scaler(tft::ScalingMode::PerSeries, {"y", "x"}, {{"A"}, {"B", "2"}},
                                   {{2.5, 1.5}, {0.0, 1.0}, {-3.0, 0.1}, {1e9, 123.456}});
  for (double value : {-7.25, 0.0, 3.0, 1e9 + 0.5}) {
    assert_true(std::fabs(scaler.inverse(scaler.transform(value, 1, 1), 1, 1) - value) <
                1e-6 * std::max(1.0, std::fabs(value)));
  }
  assert_true(scaler.transform(4.0, 0, 0) == 1.0);
  const nlohmann::json j = scaler.to_json();
  const tft::StandardScaler back = tft::StandardScaler::from_json(nlohmann::json::parse(j.dump()));
  assert_true(back == scaler);
  assert_int_equal(*back.find_group({"B", "2"}), 1);
  assert_false(back.find_group({"C"}).has_value());
  TFT_ASSERT_THROWS_WITH(tft::StandardScaler(tft::ScalingMode::Global, {"y"}, {}, {}),
                         tft::DataError, "scaler: expected 1 x 1 statistics, got 0");
  TFT_ASSERT_THROWS_WITH(tft::StandardScaler::from_json(nlohmann::json{{"mode", "odd"}}),
                         tft::DataError, "scaler: unknown mode \"odd\"");
  TFT_ASSERT_THROWS_WITH(tft::StandardScaler::from_json(nlohmann::json{{"mode", "global"}}),
                         tft::DataError, "scaler: malformed JSON");
}

TFT_TEST(test_categorical_encoder_and_unknown_bucket) {
  const tft::CategoricalEncoder e = tft::CategoricalEncoder::fit({"b", "a", "c", "a"});
  assert_int_equal(e.cardinality(), 4);
  assert_int_equal(e.encode("a"), 1);
  assert_int_equal(e.encode("b"), 2);
  assert_int_equal(e.encode("c"), 3);
  assert_int_equal(e.encode("zzz"), 0);
  assert_string_equal(e.decode(2).c_str(), "b");
  assert_string_equal(e.decode(0).c_str(), "");
  TFT_ASSERT_THROWS_WITH(e.decode(4), tft::DataError, "code 4 is out of range [0, 4)");
  assert_true(tft::CategoricalEncoder::from_json(nlohmann::json::parse(e.to_json().dump())) == e);
  TFT_ASSERT_THROWS_WITH(tft::CategoricalEncoder({"a", "a"}), tft::DataError,
                         "duplicate category \"a\"");
  TFT_ASSERT_THROWS_WITH(tft::CategoricalEncoder::from_json(nlohmann::json{{"categories", {1}}}),
                         tft::DataError, "categories must be strings");

  // In a dataset: a category seen only in the validation part maps to the unknown bucket.
  TrainConfig c = base_config();
  c.split.validation_steps = 2;
  c.data.known_categoricals = {{"promo", 0}};
  c.data.static_categoricals = {{"g", 0}};
  const std::string text =
      "g,t,y,promo\nA,0,1,no\nA,1,1,yes\nA,2,1,no\nA,3,1,no\nA,4,1,no\n"
      "A,5,1,no\nA,6,1,new\nA,7,1,yes\n";
  const TimeSeriesDataset ds = load(text, c);
  const tft::CategoricalEncoder& promo = ds.transforms().encoders.at("promo");
  assert_int_equal(promo.cardinality(), 3);  // unknown, no, yes
  const std::vector<std::int32_t>& codes = ds.categorical_column("promo");
  assert_int_equal(codes[0], promo.encode("no"));
  assert_int_equal(codes[1], promo.encode("yes"));
  assert_int_equal(codes[6], 0);  // "new": only in the validation part
  assert_int_equal(codes[7], promo.encode("yes"));
  // The schema carries the cardinalities.
  assert_int_equal(ds.schema().known_categoricals.size(), 1);
  assert_int_equal(ds.schema().known_categoricals[0].cardinality, 3);
  assert_int_equal(ds.schema().static_categoricals[0].cardinality, 2);
  assert_string_equal(ds.schema().target.c_str(), "y");
}

TFT_TEST(test_transforms_json_and_fitted_loading) {
  TrainConfig c = base_config();
  c.split.validation_steps = 2;
  c.data.static_reals = {"size"};
  c.data.known_categoricals = {{"promo", 0}};
  std::string text = "g,size,t,y,promo\n";
  for (const char* g : {"A", "B"}) {
    for (int t = 0; t < 8; ++t) {
      text += std::string(g) + "," + (g[0] == 'A' ? "1.5" : "4") + "," + std::to_string(t) + "," +
              std::to_string(t * t) + "," + (t % 3 == 0 ? "x" : "y") + "\n";
    }
  }
  const TimeSeriesDataset ds = load(text, c);
  const std::string json = ds.transforms().to_json().dump(2);
  const tft::DataTransforms back = tft::DataTransforms::from_json(nlohmann::json::parse(json));
  assert_true(back == ds.transforms());

  // New data seen through the fitted transforms: same values, unseen category -> 0.
  std::string later = text;
  later.replace(later.find(",x\n"), 3, ",q\n");
  const TimeSeriesDataset again = load(later, c, &back);
  assert_true(again.transforms() == ds.transforms());
  assert_int_equal(again.categorical_column("promo")[0], 0);
  assert_true(again.target_stats(1).mean == ds.target_stats(1).mean);
  // Per-series scaling cannot see a series it was not fitted on.
  const std::string other = "g,size,t,y,promo\n" + [] {
    std::string rows;
    for (int t = 0; t < 8; ++t) rows += "C,2," + std::to_string(t) + ",1,x\n";
    return rows;
  }();
  TFT_ASSERT_THROWS_WITH(load(other, c, &back), tft::DataError,
                         "data.csv:2: series 'C': not known to the fitted scaler");
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(nlohmann::json::object()), tft::DataError,
                         "data transforms: expected an object");
  nlohmann::json wrong_version = ds.transforms().to_json();
  wrong_version["version"] = 3;
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(wrong_version), tft::DataError,
                         "unsupported version 3");
  // Version 1 files (before data.target_normalizer) read as the series scaling they used.
  nlohmann::json version_1 = ds.transforms().to_json();
  version_1["version"] = 1;
  version_1.erase("target_normalizer");
  const tft::TargetNormalizerConfig old =
      tft::DataTransforms::from_json(version_1).target_normalizer;
  assert_true(old.scope == tft::TargetScope::Series && old.center == tft::TargetCenter::Statistic &&
              old.method == tft::TargetMethod::Standard &&
              old.transformation == tft::TargetTransformation::None);
  nlohmann::json unknown_center = ds.transforms().to_json();
  unknown_center["target_normalizer"]["center"] = "first";
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(unknown_center), tft::DataError,
                         "target_normalizer.center: unknown value \"first\" (expected one of: "
                         "statistic, last, seasonal)");
  // A season only with center seasonal (files from before it have none: 0).
  nlohmann::json no_season = ds.transforms().to_json();
  no_season.erase("target_season");
  assert_int_equal(tft::DataTransforms::from_json(no_season).target_season, 0);
  nlohmann::json stray_season = ds.transforms().to_json();
  stray_season["target_season"] = 24;
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(stray_season), tft::DataError,
                         "target_season 24 does not fit target_normalizer.center last");
  nlohmann::json bad_season = ds.transforms().to_json();
  bad_season["target_season"] = -1;
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(bad_season), tft::DataError,
                         "target_season: expected a non-negative integer, got -1");
}

// Center seasonal: the season is resolved when fitting (model.seasonality here), saved with the
// transforms, taken from them when loading new data, and must fit in the encoder.
TFT_TEST(seasonal_center_keeps_its_season) {
  TrainConfig c = base_config();
  c.split.validation_steps = 2;
  c.data.target_normalizer.center = tft::TargetCenter::Seasonal;
  c.model.seasonality = 3;
  std::string text = "g,size,t,y,promo\n";
  for (int t = 0; t < 12; ++t)
    text += "A,1," + std::to_string(t) + "," + std::to_string(t % 3) + ",x\n";
  const TimeSeriesDataset ds = load(text, c);
  assert_int_equal(ds.transforms().target_season, 3);
  const tft::DataTransforms back =
      tft::DataTransforms::from_json(nlohmann::json::parse(ds.transforms().to_json().dump()));
  assert_true(back == ds.transforms());
  TrainConfig other_season = c;
  other_season.model.seasonality = 2;  // the saved season wins over the config's
  assert_int_equal(load(text, other_season, &back).transforms().target_season, 3);

  TrainConfig too_long = c;
  too_long.model.seasonality = too_long.windows.encoder_length + 1;
  TFT_ASSERT_THROWS_WITH(load(text, too_long), tft::DataError,
                         "data.target_normalizer.center seasonal: the season (model.seasonality, " +
                             std::to_string(too_long.model.seasonality) +
                             " rows) is longer than windows.encoder_length " +
                             std::to_string(too_long.windows.encoder_length));
  TrainConfig unknown = c;
  unknown.model.seasonality = 0;  // integer times: nothing to infer from
  TFT_ASSERT_THROWS_WITH(load(text, unknown), tft::DataError,
                         "data.target_normalizer.center seasonal needs a season, and none is known "
                         "(integer times have no known season; set model.seasonality)");
}

// Center auto: seasonal for sub-daily data whose season fits in the encoder, last otherwise,
// statistic under scope series; the choice and its reason are the dataset's, the saved
// transforms keep the resolved center (never "auto"), and a saved model keeps its choice.
TFT_TEST(auto_center_chooses_by_time_step) {
  TrainConfig c = base_config();
  c.data.group_columns = {};
  c.windows.encoder_length = 24;
  c.split.validation_steps = 2;
  assert_true(c.data.target_normalizer.center == tft::TargetCenter::Auto);  // the default
  // 60 rows from 2024-01-01, stepping by `hours` hours.
  const auto rows = [](int hours) {
    std::string text = "t,y\n";
    for (int i = 0; i < 60; ++i) {
      const int h = i * hours, day = h / 24;  // day < 60: January and February 2024
      char time[32];
      std::snprintf(time, sizeof time, "2024-%02d-%02dT%02d:00:00", day < 31 ? 1 : 2,
                    day < 31 ? day + 1 : day - 30, h % 24);
      text += std::string(time) + "," + std::to_string(10 + i % 24) + "\n";
    }
    return text;
  };
  const auto center_of = [](const TimeSeriesDataset& ds) {
    return std::string(tft::to_string(ds.transforms().target_normalizer.center));
  };

  const TimeSeriesDataset hourly = load(rows(1), c);
  assert_string_equal(center_of(hourly).c_str(), "seasonal");
  assert_int_equal(hourly.transforms().target_season, 24);
  assert_string_equal(hourly.target_center_reason().c_str(),
                      "auto: sub-daily data, a season of 24 rows (hourly data)");
  // The seasons worth trying: the known one, the day and the week, where they fit.
  assert_true(tft::candidate_seasons(hourly, 24, 24) == std::vector<std::int64_t>{24});
  assert_true(tft::candidate_seasons(hourly, 24, 168) == (std::vector<std::int64_t>{24, 168}));
  assert_true(tft::candidate_seasons(hourly, 12, 200) == (std::vector<std::int64_t>{12, 24, 168}));
  assert_true(tft::candidate_seasons(hourly, 0, 10).empty());
  const nlohmann::json saved = hourly.transforms().to_json();
  assert_string_equal(saved["target_normalizer"]["center"].get<std::string>().c_str(), "seasonal");
  const tft::DataTransforms back = tft::DataTransforms::from_json(saved);
  const TimeSeriesDataset reloaded = load(rows(1), c, &back);
  assert_string_equal(center_of(reloaded).c_str(), "seasonal");
  assert_string_equal(reloaded.target_center_reason().c_str(), "the saved model's");

  TrainConfig short_encoder = c;
  short_encoder.windows.encoder_length = 12;
  const TimeSeriesDataset too_short = load(rows(1), short_encoder);
  assert_string_equal(center_of(too_short).c_str(), "last");
  assert_int_equal(too_short.transforms().target_season, 0);
  assert_string_equal(too_short.target_center_reason().c_str(),
                      "auto: the season (hourly data, 24 rows) is longer than "
                      "windows.encoder_length 12");

  const TimeSeriesDataset daily = load(rows(24), c);
  assert_string_equal(center_of(daily).c_str(), "last");
  assert_string_equal(daily.target_center_reason().c_str(), "auto: the data is not sub-daily");

  std::string integer_times = "t,y\n";
  for (int i = 0; i < 60; ++i) integer_times += std::to_string(i) + ",1\n";
  assert_string_equal(center_of(load(integer_times, c)).c_str(), "last");

  TrainConfig series_scope = c;
  series_scope.data.target_normalizer.scope = tft::TargetScope::Series;
  const TimeSeriesDataset statistic = load(rows(1), series_scope);
  assert_string_equal(center_of(statistic).c_str(), "statistic");
  assert_string_equal(statistic.target_center_reason().c_str(), "auto: scope series");

  TrainConfig configured = c;
  configured.data.target_normalizer.center = tft::TargetCenter::Last;
  const TimeSeriesDataset last = load(rows(1), configured);
  assert_string_equal(center_of(last).c_str(), "last");
  assert_string_equal(last.target_center_reason().c_str(), "configured");
}

// Scope auto with center auto leaves the choice open for the trainer's pilots (provisional);
// scope series or a configured center does not.
TFT_TEST(auto_scope_and_center_are_provisional) {
  TrainConfig c = base_config();
  c.data.group_columns = {};
  c.split.validation_steps = 2;
  assert_true(c.data.target_normalizer.scope == tft::TargetScope::Auto);  // the default
  std::string text = "t,y\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(i) + "," + std::to_string(i % 5) + "\n";
  const TimeSeriesDataset open = load(text, c);
  assert_true(open.target_center_is_provisional());
  // Resolved for the data all the same: what a dataset loaded on its own runs with.
  assert_true(open.transforms().target_normalizer.scope == tft::TargetScope::Encoder);
  assert_true(open.transforms().target_normalizer.center == tft::TargetCenter::Last);
  TrainConfig series = c;
  series.data.target_normalizer.scope = tft::TargetScope::Series;
  assert_false(load(text, series).target_center_is_provisional());
  TrainConfig fixed = c;
  fixed.data.target_normalizer.center = tft::TargetCenter::Last;
  const TimeSeriesDataset configured = load(text, fixed);
  assert_false(configured.target_center_is_provisional());
  assert_true(configured.transforms().target_normalizer.scope == tft::TargetScope::Encoder);
}

// recenter() switches center and scope without refitting; seasonal needs a season that fits.
TFT_TEST(recenter_switches_the_center) {
  TrainConfig c = base_config();
  c.data.group_columns = {};
  c.split.validation_steps = 2;
  c.model.seasonality = 3;
  std::string text = "t,y\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(i) + "," + std::to_string(i % 3) + "\n";
  TimeSeriesDataset ds = load(text, c);
  assert_int_equal(ds.known_season(), 3);
  const tft::StandardScaler scaler = ds.transforms().scaler;
  ds.recenter({tft::TargetScope::Series, tft::TargetCenter::Statistic, 0}, "because");
  assert_false(ds.target_center_is_provisional());
  assert_string_equal(ds.target_center_reason().c_str(), "because");
  assert_true(ds.transforms().scaler == scaler);
  assert_int_equal(ds.transforms().target_season, 0);
  // Scope series: every window has the series' statistics.
  const tft::ScalerStats a = ds.target_normalization(0, 0), b = ds.target_normalization(0, 7);
  assert_true(a.mean == b.mean && a.scale == b.scale);
  ds.recenter({tft::TargetScope::Encoder, tft::TargetCenter::Seasonal, 3}, "seasonal");
  assert_int_equal(ds.transforms().target_season, 3);
  TFT_ASSERT_THROWS_WITH(ds.recenter({tft::TargetScope::Series, tft::TargetCenter::Last, 0}, "x"),
                         tft::ConfigError, "recenter: center last needs scope encoder");
  TFT_ASSERT_THROWS_WITH(ds.recenter({tft::TargetScope::Auto, tft::TargetCenter::Last, 0}, "x"),
                         tft::ConfigError, "must be resolved");
  TFT_ASSERT_THROWS_WITH(
      ds.recenter({tft::TargetScope::Encoder, tft::TargetCenter::Seasonal, 50}, "x"),
      tft::ConfigError, "center seasonal needs a season within the encoder (season 50");
  TFT_ASSERT_THROWS_WITH(
      ds.recenter({tft::TargetScope::Encoder, tft::TargetCenter::Seasonal, 0}, "x"),
      tft::ConfigError, "center seasonal needs a season within the encoder (season 0");
}

// A pilot's dataset sees the training part alone: its windows end before the validation rows,
// its own holdout is the training part's end (the config's split rule), its scaler is refitted
// on what is left, and its windows are thinned evenly to the limits.
TFT_TEST(training_holdout_carves_the_training_part) {
  TrainConfig c = base_config();
  c.split.validation_steps = 4;
  std::string text = "g,t,y\n";
  for (const char* g : {"A", "B"}) {
    for (int t = 0; t < 30; ++t) {
      const double y = t < 26 ? (g[0] == 'A' ? t : 2.0 * t) : 1e6;  // validation rows: extreme
      text += std::string(g) + "," + std::to_string(t) + "," + std::to_string(y) + "\n";
    }
  }
  const TimeSeriesDataset ds = load(text, c);
  const std::optional<TimeSeriesDataset> pilot = ds.training_holdout(
      c, {tft::TargetScope::Series, tft::TargetCenter::Statistic, 0}, 1000, 1000);
  assert_true(pilot.has_value());
  const std::int64_t span = c.windows.encoder_length + c.windows.prediction_length;
  for (std::size_t s = 0; s < 2; ++s) {
    assert_int_equal(pilot->series()[s].length, 26);
    assert_int_equal(pilot->series()[s].train_rows, 22);
  }
  for (const tft::Window& w : pilot->training_windows()) assert_true(w.start + span <= 22);
  for (const tft::Window& w : pilot->validation_windows()) {
    assert_true(w.start + span <= 26);
    assert_true(w.start + span > 22);
  }
  assert_false(pilot->validation_windows().empty());
  // Series A's target over t = 0 ... 21: mean 10.5.
  assert_true(std::fabs(pilot->target_stats(0).mean - 10.5) < 1e-9);
  assert_true(std::fabs(ds.target_stats(0).mean - 12.5) < 1e-9);  // the full training part's
  assert_true(pilot->transforms().target_normalizer.scope == tft::TargetScope::Series);
  assert_true(pilot->transforms().target_normalizer.center == tft::TargetCenter::Statistic);

  const std::optional<TimeSeriesDataset> thin =
      ds.training_holdout(c, {tft::TargetScope::Encoder, tft::TargetCenter::Last, 0}, 5, 2);
  assert_int_equal(static_cast<int>(thin->training_windows().size()), 5);
  assert_int_equal(static_cast<int>(thin->validation_windows().size()), 2);
  // Evenly: the first window of series A and a window of series B are both kept.
  assert_int_equal(static_cast<int>(thin->training_windows().front().series), 0);
  assert_int_equal(static_cast<int>(thin->training_windows().back().series), 1);

  // A training part too short to hold a validation window out: nothing.
  TrainConfig tight = c;
  tight.split.validation_steps = 30 - span;  // the training part is one window
  const TimeSeriesDataset short_train = load(text, tight);
  assert_false(short_train
                   .training_holdout(tight, {tft::TargetScope::Encoder, tft::TargetCenter::Last, 0},
                                     100, 100)
                   .has_value());
}

// output.median_rounding auto: whole-number medians when every training value of the target is
// a whole number (the validation part does not count), kept by the saved
// transforms, forced either way by whole and none, and never in a pilot's holdout.
TFT_TEST(whole_number_median_follows_the_training_part) {
  TrainConfig c = base_config();
  c.split.validation_steps = 2;
  const auto with_values = [](double training, double validation) {
    std::string text = "g,t,y\n";
    for (int t = 0; t < 12; ++t) {
      const double y = t < 10 ? 3.0 * t + training : validation;
      text += "A," + std::to_string(t) + "," + std::to_string(y) + "\n";
    }
    return text;
  };
  const TimeSeriesDataset counts = load(with_values(0.0, 7.25), c);  // validation values ignored
  assert_true(counts.transforms().whole_number_median);
  const TimeSeriesDataset reals = load(with_values(0.5, 7.0), c);
  assert_false(reals.transforms().whole_number_median);
  // One fraction anywhere in the training part is enough to say no.
  std::string one_fraction = with_values(0.0, 7.0);
  one_fraction.replace(one_fraction.find("A,4,12.000000"), 13, "A,4,12.001");
  assert_false(load(one_fraction, c).transforms().whole_number_median);

  TrainConfig whole = c;
  whole.output.median_rounding = tft::MedianRounding::Whole;
  assert_true(load(with_values(0.5, 7.0), whole).transforms().whole_number_median);
  TrainConfig none = c;
  none.output.median_rounding = tft::MedianRounding::None;
  assert_false(load(with_values(0.0, 7.0), none).transforms().whole_number_median);

  // The fitted transforms keep it, through JSON too, whatever the new data and config say;
  // transforms written before the key existed read as false.
  const tft::DataTransforms saved = tft::DataTransforms::from_json(counts.transforms().to_json());
  assert_true(saved.whole_number_median);
  assert_true(saved == counts.transforms());
  assert_true(load(with_values(0.5, 7.0), none, &saved).transforms().whole_number_median);
  nlohmann::json old = counts.transforms().to_json();
  old.erase("whole_number_median");
  assert_false(tft::DataTransforms::from_json(old).whole_number_median);
  nlohmann::json bad = counts.transforms().to_json();
  bad["whole_number_median"] = 1;
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(bad), tft::DataError,
                         "whole_number_median: expected true or false, got 1");

  // Pilots rank the models' own medians.
  TrainConfig longer = c;
  const TimeSeriesDataset long_counts =
      load("g,t,y\n" + series_rows("A", 30, [](int t) { return t % 5; }), longer);
  assert_true(long_counts.transforms().whole_number_median);
  const std::optional<TimeSeriesDataset> pilot = long_counts.training_holdout(
      longer, {tft::TargetScope::Encoder, tft::TargetCenter::Last, 0}, 100, 100);
  assert_true(pilot.has_value());
  assert_false(pilot->transforms().whole_number_median);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scaling_fitted_on_training_part_only),
      cmocka_unit_test(test_scaler_round_trip),
      cmocka_unit_test(test_categorical_encoder_and_unknown_bucket),
      cmocka_unit_test(test_transforms_json_and_fitted_loading),
      cmocka_unit_test(seasonal_center_keeps_its_season),
      cmocka_unit_test(auto_center_chooses_by_time_step),
      cmocka_unit_test(auto_scope_and_center_are_provisional),
      cmocka_unit_test(recenter_switches_the_center),
      cmocka_unit_test(training_holdout_carves_the_training_part),
      cmocka_unit_test(whole_number_median_follows_the_training_part),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
