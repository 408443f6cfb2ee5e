// TimeSeriesDataset loading errors, each with its exact message: missing and duplicated
// columns, bad values, time order, short series, static columns, derived features, hints at
// the likely mistake, and targets outside the normaliser's transformation domain.
#include <cmath>
#include <string>

#include "common/error.h"
#include "config/train_config.h"
#include "data/target_normalizer.h"
#include "data/time_series_dataset.h"

#include "dataset_support.h"
#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using namespace tft_test;

// ---------------------------------------------------------------------------------------
// Errors

TFT_TEST(test_missing_and_duplicated_columns) {
  TrainConfig c = base_config();
  c.data.unknown_reals = {"close"};
  expect_data_error(two_series(), c,
                    "data.csv:1: column 'close': not in the header (named by "
                    "data.unknown_reals[0]; columns: g, t, y)");
  c = base_config();
  c.data.time_column = "date";
  expect_data_error(two_series(), c, "data.csv:1: column 'date': not in the header");
  c = base_config();
  expect_data_error("g,t,y,y\nA,0,1,2\n", c,
                    "data.csv:1: column 'y': appears more than once in the header");
  // An unused duplicate is harmless.
  const TimeSeriesDataset ok =
      load("g,t,y,x,x\nA,0,1,a,b\nA,1,2,a,b\nA,2,3,a,b\nA,3,4,a,b\nA,4,5,a,b\n", c);
  assert_int_equal(ok.num_rows(), 5);
}

TFT_TEST(test_bad_values) {
  const TrainConfig c = base_config();
  expect_data_error("g,t,y\nA,0,1\nA,1,n/a\n", c, "data.csv:3: column 'y': not a number: \"n/a\"");
  expect_data_error("g,t,y\nA,0,1\nA,1,\n", c,
                    "data.csv:3: column 'y': empty value (data.missing_values: error)");
  expect_data_error("g,t,y\nA,0,1\nA,1,1.5x\n", c, "data.csv:3: column 'y': not a number");
  expect_data_error("g,t,y\nA,0,inf\n", c,
                    "data.csv:2: column 'y': not a finite float32 number: \"inf\"");
  expect_data_error("g,t,y\nA,0,1e39\n", c,
                    "data.csv:2: column 'y': not a finite float32 number: \"1e39\"");
  expect_data_error("g,t,y\nA,0,1\nA,x,1\n", c, "data.csv:3: column 't': not an integer: \"x\"");
  // time_format auto decides by the first value: not an integer, so ISO 8601 is expected.
  expect_data_error("g,t,y\nA,x,1\n", c,
                    "data.csv:2: column 't': not an ISO 8601 date or date-time: \"x\" (expected "
                    "a date YYYY-MM-DD)");
  expect_data_error("g,t,y\nA,,1\n", c,
                    "data.csv:2: column 't': empty value (the time column needs a value in "
                    "every row)");
  expect_data_error("g,t,y\n,0,1\n", c,
                    "data.csv:2: column 'g': empty value (a group column needs a value in every "
                    "row)");
  TrainConfig na = base_config();
  na.data.na_values = {"", "NA"};
  expect_data_error("g,t,y\nA,0,1\nA,1,NA\n", na,
                    "data.csv:3: column 'y': missing value \"NA\" (data.missing_values: error)");
  expect_data_error("g,t,y\nA,0\n", c, "data.csv:2: expected 3 fields, got 2");
  expect_data_error("g,t,y\n", c, "data.csv:1: no data rows after the header");

  TrainConfig iso = base_config();
  iso.data.time_column = "date";
  expect_data_error("g,date,y\nA,2020-02-28,1\nA,2020-02-30,2\n", iso,
                    "data.csv:3: column 'date': not an ISO 8601 date or date-time: "
                    "\"2020-02-30\" (day 30 does not exist in 2020-02)");
  iso.data.time_format = tft::TimeFormat::Integer;
  expect_data_error("g,date,y\nA,2020-02-28,1\n", iso,
                    "data.csv:2: column 'date': not an integer: \"2020-02-28\"");
}

TFT_TEST(test_unsorted_and_duplicated_times) {
  const TrainConfig c = base_config();
  expect_data_error("g,t,y\nA,0,1\nA,2,1\nA,1,1\n", c,
                    "data.csv:4: column 't': time 1 is before 2 of the previous row of series "
                    "'A' (line 3); rows of a series must be in increasing time order");
  expect_data_error("g,t,y\nA,0,1\nA,2,1\nA,2,1\n", c,
                    "data.csv:4: column 't': duplicate time 2 in series 'A' (also at line 3)");
  // Interleaved series are fine; order is checked within each series.
  expect_data_error("g,t,y\nA,0,1\nB,5,1\nA,1,1\nB,4,1\n", c,
                    "data.csv:5: column 't': time 4 is before 5 of the previous row of series "
                    "'B' (line 3)");
  TrainConfig iso = base_config();
  iso.data.time_column = "date";
  expect_data_error("g,date,y\nA,2020-01-02,1\nA,2020-01-01T12:00:00+01:00,1\n", iso,
                    "data.csv:3: column 'date': time 2020-01-01T11:00:00Z is before "
                    "2020-01-02T00:00:00Z");
  // Equal instants written with different offsets are duplicates.
  expect_data_error("g,date,y\nA,2020-01-01T12:00:00Z,1\nA,2020-01-01T13:00:00+01:00,1\n", iso,
                    "data.csv:3: column 'date': duplicate time 2020-01-01T12:00:00Z in series "
                    "'A' (also at line 2)");
}

TFT_TEST(test_series_shorter_than_a_window) {
  TrainConfig c = base_config();
  const std::string text = "g,t,y\n" + series_rows("A", 6, [](int t) { return t; }) +
                           series_rows("B", 4, [](int t) { return t; });
  expect_data_error(text, c,
                    "data.csv:8: series 'B': 4 rows, shorter than one window "
                    "(windows.encoder_length 3 + windows.prediction_length 2 = 5 rows)");
  c.data.group_columns = {"g", "t2"};
  c.data.time_column = "t";
  expect_data_error("g,t2,t,y\nA,x,0,1\nA,x,1,1\n", c,
                    "data.csv:2: series g=A, t2=x: 2 rows, shorter than one window");
  c = base_config();
  c.split.validation_steps = 6;
  expect_data_error(two_series(), c,
                    "data.csv:2: series 'A': split.validation_steps 6 leaves no training rows "
                    "(the series has 6 rows)");
  c.split.validation_steps = 2;  // 4 training rows < one window of 5
  expect_data_error(two_series(), c,
                    "data.csv:1: no training windows: the training part of every series is "
                    "shorter than one window");
  c = base_config();
  c.split.validation_steps.reset();
  c.split.validation_fraction = 0.1;  // floor(0.6) = 0 rows: nothing to validate on
  expect_data_error(two_series(), c, "data.csv:1: no validation windows");
}

TFT_TEST(test_static_columns_must_be_constant) {
  TrainConfig c = base_config();
  c.data.static_categoricals = {{"region", 0}};
  expect_data_error("g,region,t,y\nA,north,0,1\nA,north,1,1\nA,south,2,1\n", c,
                    "data.csv:4: column 'region': static value \"south\" differs from "
                    "\"north\" at line 2 (series 'A'); a static column must be constant within "
                    "a series");
  c = base_config();
  c.data.static_reals = {"size"};
  expect_data_error("g,size,t,y\nA,1.5,0,1\nA,2,1,1\n", c,
                    "data.csv:3: column 'size': static value \"2\" differs from the series' "
                    "value at line 2");
}

TFT_TEST(test_derived_feature_errors) {
  TrainConfig c = base_config();
  c.data.known_reals = {"month"};
  expect_data_error(two_series(), c,
                    "data.csv:2: column 't': holds integers, but the derived feature 'month' "
                    "needs ISO 8601 dates or date-times");
  c = base_config();
  c.data.unknown_reals = {"day_of_week"};
  expect_data_error(two_series(), c,
                    "data.csv:1: column 'day_of_week': not in the header, and derived features "
                    "(day_of_week, month, day_of_month, hour, relative_time_idx) are known in "
                    "advance");
}

// ---------------------------------------------------------------------------------------
// Hints and the target's domain

TFT_TEST(errors_hint_at_the_likely_mistake) {
  // Two series one after the other, without data.group_columns: the time restarts.
  TrainConfig c = base_config();
  c.data.group_columns.clear();
  expect_data_error("t,y\n0,1\n1,2\n2,3\n0,4\n1,5\n2,6\n", c,
                    "data.csv:5: column 't': time 0 is before 2 of the previous row of series "
                    "(all rows) (line 4); rows of a series must be in increasing time order; if "
                    "the file holds several series, name the columns that tell them apart in "
                    "data.group_columns");
  expect_data_error("t,y\n0,1\n1,2\n1,3\n", c, "tell them apart in data.group_columns");
  // hour of a date-only time column would be the constant 0.
  c.data.time_column = "date";
  c.data.known_categoricals = {{"hour", 0}};
  expect_data_error(
      "date,y\n2024-01-01,1\n2024-01-02,2\n2024-01-03,3\n2024-01-04,4\n"
      "2024-01-05,5\n",
      c,
      "data.csv: column 'date' holds dates only, so the derived feature 'hour' "
      "would be 0 in every row");
  // With times of day it is a feature.
  const TimeSeriesDataset hours = load(
      "date,y\n2024-01-01T01:00,1\n2024-01-01T02:00,2\n2024-01-01T03:00,3\n"
      "2024-01-01T04:00,4\n2024-01-01T05:00,5\n",
      c);
  assert_int_equal(static_cast<int>(hours.num_rows()), 5);
}

TFT_TEST(target_outside_the_transformation_domain_is_an_error) {
  TrainConfig c = base_config();
  const std::string rows = "g,t,y\nA,0,3\nA,1,0.5\nA,2,0\nA,3,2\nA,4,1\nA,5,-0.5\n";
  c.data.target_normalizer.transformation = tft::TargetTransformation::Log;
  expect_data_error(rows, c,
                    "data.csv:4: column 'y': value 0 is outside the domain of "
                    "data.target_normalizer.transformation 'log' (values must be > 0)");
  c.data.target_normalizer.transformation = tft::TargetTransformation::Softplus;
  expect_data_error(rows, c, "data.csv:4: column 'y': value 0 is outside the domain");
  c.data.target_normalizer.transformation = tft::TargetTransformation::Log1p;
  const TimeSeriesDataset ds = load(rows, c);  // every value is above -1
  assert_true(std::fabs(ds.denormalize_target(ds.normalize_target(-0.5, {0.25, 2.0}), {0.25, 2.0}) +
                        0.5) < 1e-12);
  assert_true(std::fabs(tft::inverse_transform_target(
                            tft::TargetTransformation::Softplus,
                            tft::transform_target(tft::TargetTransformation::Softplus, 1e-3)) -
                        1e-3) < 1e-15);
  // Large values neither overflow nor lose the value (log(exp(y) - 1) ~ y).
  assert_true(tft::transform_target(tft::TargetTransformation::Softplus, 800.0) == 800.0);
  assert_true(tft::inverse_transform_target(tft::TargetTransformation::Softplus, 800.0) == 800.0);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_and_duplicated_columns),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_unsorted_and_duplicated_times),
      cmocka_unit_test(test_series_shorter_than_a_window),
      cmocka_unit_test(test_static_columns_must_be_constant),
      cmocka_unit_test(test_derived_feature_errors),
      cmocka_unit_test(errors_hint_at_the_likely_mistake),
      cmocka_unit_test(target_outside_the_transformation_domain_is_an_error),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
