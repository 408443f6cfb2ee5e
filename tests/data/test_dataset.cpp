// TimeSeriesDataset: every loading error with its exact message, missing-value policies,
// windows and the time split (asserted on indices: no leakage), scaling fitted on the training
// part only, categorical encoders with the unknown bucket, derived features, serialised
// transforms, and deterministic sampling.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "data/target_normalizer.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "data/categorical_encoder.h"
#include "data/csv_reader.h"
#include "data/scaler.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"

#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using tft::Window;

namespace {

// Integer time `t`, target `y`, series by `g`; encoder 3, decoder 2, no validation.
TrainConfig base_config() {
  TrainConfig c;
  c.data.path = "data.csv";
  c.data.time_column = "t";
  c.data.target = "y";
  c.data.group_columns = {"g"};
  c.windows.encoder_length = 3;
  c.windows.prediction_length = 2;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 0;
  return c;
}

TimeSeriesDataset load(const std::string& text, const TrainConfig& config,
                       const tft::DataTransforms* fitted = nullptr) {
  return TimeSeriesDataset::from_reader(tft::CsvReader("data.csv", text, config.data.delimiter),
                                        config, fitted);
}

// Series `name` with rows t = 0..n-1 and y = f(t).
std::string series_rows(const std::string& name, int n, const std::function<double(int)>& f) {
  std::string out;
  char buf[128];
  for (int t = 0; t < n; ++t) {
    std::snprintf(buf, sizeof buf, "%s,%d,%.6g\n", name.c_str(), t, f(t));
    out += buf;
  }
  return out;
}

std::string two_series() {
  return "g,t,y\n" + series_rows("A", 6, [](int t) { return t; }) +
         series_rows("B", 6, [](int t) { return 10 * t; });
}

void expect_data_error(const std::string& text, const TrainConfig& config,
                       const char* message) {
  TFT_ASSERT_THROWS_WITH(load(text, config), tft::DataError, message);
}

}  // namespace

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
// Missing-value policies

TFT_TEST(test_forward_fill_and_drop_row) {
  TrainConfig c = base_config();
  c.data.unknown_reals = {"x"};
  c.data.unknown_categoricals = {{"k", 0}};
  c.data.missing_values = tft::MissingValuePolicy::ForwardFill;
  const std::string text =
      "g,t,y,x,k\n"
      "A,0,1,5,a\nB,0,9,7,b\nA,1,,,\nA,2,3,6,\nB,1,8,,c\nA,3,4,,b\nA,4,5,1,a\nB,2,7,1,c\n"
      "B,3,6,1,c\nB,4,5,1,c\n";
  const TimeSeriesDataset ds = load(text, c);
  assert_int_equal(ds.filled_values(), 6);
  const std::vector<float>& y = ds.real_column("y");
  const std::vector<float>& x = ds.real_column("x");
  // Series A first (rows 0..4), then B: interleaved rows were regrouped, order kept.
  const std::vector<float> expected_y = {1, 1, 3, 4, 5, 9, 8, 7, 6, 5};
  const std::vector<float> expected_x = {5, 5, 6, 6, 1, 7, 7, 1, 1, 1};
  for (std::size_t i = 0; i < expected_y.size(); ++i) {
    assert_true(y[i] == expected_y[i]);
    assert_true(x[i] == expected_x[i]);
  }
  const std::vector<std::int32_t>& k = ds.categorical_column("k");
  const tft::CategoricalEncoder& enc = ds.transforms().encoders.at("k");
  assert_int_equal(k[1], enc.encode("a"));  // filled from row 0
  assert_int_equal(k[2], enc.encode("a"));
  assert_int_equal(ds.times()[5], 0);
  assert_string_equal(ds.series()[1].label.c_str(), "'B'");
  assert_int_equal(ds.series()[1].offset, 5);

  expect_data_error("g,t,y,x,k\nA,0,1,,a\n", c,
                    "data.csv:2: column 'x': empty value in the first row of series 'A', with "
                    "no earlier value to carry forward (data.missing_values: forward_fill)");

  c.data.missing_values = tft::MissingValuePolicy::DropRow;
  const TimeSeriesDataset dropped =
      load(text + "A,5,6,1,a\nA,6,7,1,a\nA,7,8,1,a\nB,5,4,1,c\n", c);
  assert_int_equal(dropped.dropped_rows(), 4);  // rows with any missing value
  assert_int_equal(dropped.filled_values(), 0);
  assert_int_equal(dropped.series()[0].length, 5);  // A keeps t = 0, 4, 5, 6, 7
  assert_int_equal(dropped.series()[1].length, 5);  // B keeps t = 0, 2, 3, 4, 5
  assert_int_equal(dropped.times()[0], 0);
  assert_int_equal(dropped.times()[1], 4);
  assert_int_equal(dropped.times()[6], 2);
}

// Found by fuzz_csv_dataset: a series whose every row is dropped still existed, without rows
// or static values, and building the dataset read its static values from an empty vector
// (a null dereference without sanitizers). Dropped rows count as not in the file, so the
// series is not in the data either.
TFT_TEST(test_drop_row_removes_a_series_left_without_rows) {
  TrainConfig c = base_config();
  c.data.static_reals = {"z"};
  c.data.static_categoricals = {{"g", 0}};
  c.data.missing_values = tft::MissingValuePolicy::DropRow;
  const std::string text = "g,t,y,z\nB,0,,\nA,0,1,3\nA,1,2,3\nA,2,3,3\nA,3,4,3\nA,4,5,3\n"
                           "C,0,1,4\nB,1,6,\nC,1,2,4\nC,2,3,4\nC,3,4,4\nC,4,5,4\n";
  const TimeSeriesDataset ds = load(text, c);
  assert_int_equal(ds.dropped_rows(), 2);
  assert_int_equal(ds.series().size(), 2);
  assert_string_equal(ds.series()[0].label.c_str(), "'A'");
  assert_string_equal(ds.series()[1].label.c_str(), "'C'");
  assert_int_equal(ds.series()[1].offset, 5);
  assert_int_equal(ds.real_column("y")[5], 1);  // C's rows follow A's, B left no gap
  assert_int_equal(ds.training_windows().size(), 2);
  std::vector<float> static_reals(1);
  std::vector<std::int64_t> static_categoricals(1);
  tft::SampleBuffers out;
  out.static_reals = static_reals.data();
  out.static_categoricals = static_categoricals.data();
  std::vector<float> encoder_reals(3), targets(2);
  std::vector<std::int64_t> decoder_times(2);
  out.encoder_reals = encoder_reals.data();
  out.targets = targets.data();
  out.decoder_times = decoder_times.data();
  ds.fill_sample(ds.training_windows()[1], out);  // C's: its own static values
  const tft::CategoricalEncoder& g = ds.transforms().encoders.at("g");
  assert_int_equal(static_categoricals[0], g.encode("C"));
  assert_int_equal(g.encode("B"), 0);  // B never made it into the encoder
}

// ---------------------------------------------------------------------------------------
// Windows and split

TFT_TEST(test_windows_and_split_do_not_leak) {
  TrainConfig c = base_config();
  c.windows.encoder_length = 4;
  c.windows.prediction_length = 2;
  c.split.validation_steps = 4;
  const int lengths[] = {20, 15, 12};
  std::string text = "g,t,y\n";
  // Interleave the series in the file to exercise regrouping.
  for (int t = 0; t < 20; ++t) {
    for (int s = 0; s < 3; ++s) {
      if (t < lengths[s]) text += std::string(1, static_cast<char>('A' + s)) + "," +
                                  std::to_string(t) + "," + std::to_string(t * (s + 1)) + "\n";
    }
  }
  for (const std::int64_t stride : {1, 3}) {
    c.windows.stride = stride;
    const TimeSeriesDataset ds = load(text, c);
    assert_int_equal(ds.series().size(), 3);
    const std::int64_t span = 6;
    std::vector<std::set<std::int64_t>> validated(3);
    std::vector<std::size_t> train_count(3, 0);
    for (const Window& w : ds.training_windows()) {
      const tft::SeriesInfo& s = ds.series()[w.series];
      assert_true(s.train_rows == s.length - 4);
      // Every row of a training window, decoder targets included, is a training row.
      assert_true(static_cast<std::int64_t>(w.start) + span <= s.train_rows);
      assert_int_equal(w.start % stride, 0);
      ++train_count[w.series];
    }
    for (const Window& w : ds.validation_windows()) {
      const tft::SeriesInfo& s = ds.series()[w.series];
      const std::int64_t decoder_start = w.start + 4;
      assert_true(decoder_start >= s.train_rows);  // targets only from the validation part
      assert_true(static_cast<std::int64_t>(w.start) + span <= s.length);
      for (std::int64_t r = decoder_start; r < decoder_start + 2; ++r) {
        validated[w.series].insert(r);
      }
    }
    for (std::size_t s = 0; s < 3; ++s) {
      const std::int64_t b = lengths[s] - 4;
      // Training windows: starts 0, stride, ... with start + 6 <= b.
      assert_int_equal(train_count[s], static_cast<std::size_t>((b - span) / stride + 1));
      if (stride == 1) {
        // Every validation row is a target of some validation window.
        assert_int_equal(validated[s].size(), 4);
        assert_int_equal(*validated[s].begin(), b);
      }
    }
    // Decoder times of windows come from the right series rows.
    assert_int_equal(ds.times()[static_cast<std::size_t>(ds.series()[2].offset)], 0);
    assert_int_equal(ds.real_column("y")[static_cast<std::size_t>(ds.series()[2].offset) + 3], 9);
  }

  // validation_fraction: floor(0.25 * 20) = 5 rows.
  c.windows.stride = 1;
  c.split.validation_steps.reset();
  c.split.validation_fraction = 0.25;
  const TimeSeriesDataset frac = load(text, c);
  assert_int_equal(frac.series()[0].train_rows, 15);
  assert_int_equal(frac.series()[1].train_rows, 12);  // 15 - floor(3.75)
  assert_int_equal(frac.series()[2].train_rows, 9);
  // No validation at all: every window is a training window.
  c.split.validation_fraction = 0.0;
  const TimeSeriesDataset all = load(text, c);
  assert_int_equal(all.validation_windows().size(), 0);
  assert_int_equal(all.training_windows().size(), (20 - 5) + (15 - 5) + (12 - 5));
}

TFT_TEST(test_append_series_windows_directly) {
  tft::WindowConfig w;
  w.encoder_length = 3;
  w.prediction_length = 2;
  w.stride = 1;
  std::vector<Window> train;
  std::vector<Window> valid;
  tft::append_series_windows(7, 10, 7, w, train, valid);
  assert_int_equal(train.size(), 3);  // starts 0, 1, 2 (2 + 5 = 7)
  assert_int_equal(train.back().start, 2);
  assert_int_equal(train.back().series, 7);
  assert_int_equal(valid.size(), 2);  // decoder starts 7 and 8: starts 4 and 5
  assert_int_equal(valid.front().start, 4);
  assert_int_equal(valid.back().start, 5);
  // Training part shorter than the encoder: validation windows start at 0.
  train.clear();
  valid.clear();
  tft::append_series_windows(0, 6, 2, w, train, valid);
  assert_int_equal(train.size(), 0);
  assert_int_equal(valid.size(), 2);
  assert_int_equal(valid.front().start, 0);
  tft::SplitConfig split;
  assert_int_equal(tft::validation_rows(10, split), 2);
  split.validation_fraction.reset();
  split.validation_steps = 4;
  assert_int_equal(tft::validation_rows(10, split), 4);
}

// ---------------------------------------------------------------------------------------
// Scaling and encoders

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
  expect_data_error("date,y\n2024-01-01,1\n2024-01-02,2\n2024-01-03,3\n2024-01-04,4\n"
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
  assert_true(std::fabs(ds.denormalize_target(ds.normalize_target(-0.5, {0.25, 2.0}),
                                              {0.25, 2.0}) + 0.5) < 1e-12);
  assert_true(std::fabs(tft::inverse_transform_target(
                            tft::TargetTransformation::Softplus,
                            tft::transform_target(tft::TargetTransformation::Softplus, 1e-3)) -
                        1e-3) < 1e-15);
  // Large values neither overflow nor lose the value (log(exp(y) - 1) ~ y).
  assert_true(tft::transform_target(tft::TargetTransformation::Softplus, 800.0) == 800.0);
  assert_true(tft::inverse_transform_target(tft::TargetTransformation::Softplus, 800.0) == 800.0);
}

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
  const tft::StandardScaler scaler(tft::ScalingMode::PerSeries, {"y", "x"},
                                   {{"A"}, {"B", "2"}},
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
  const std::string text = "g,t,y,promo\nA,0,1,no\nA,1,1,yes\nA,2,1,no\nA,3,1,no\nA,4,1,no\n"
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
      text += std::string(g) + "," + (g[0] == 'A' ? "1.5" : "4") + "," + std::to_string(t) +
              "," + std::to_string(t * t) + "," + (t % 3 == 0 ? "x" : "y") + "\n";
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
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(nlohmann::json::object()),
                         tft::DataError, "data transforms: expected an object");
  nlohmann::json wrong_version = ds.transforms().to_json();
  wrong_version["version"] = 3;
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(wrong_version), tft::DataError,
                         "unsupported version 3");
  // Version 1 files (before data.target_normalizer) read as the series scaling they used.
  nlohmann::json version_1 = ds.transforms().to_json();
  version_1["version"] = 1;
  version_1.erase("target_normalizer");
  const tft::TargetNormalizerConfig old = tft::DataTransforms::from_json(version_1).target_normalizer;
  assert_true(old.scope == tft::TargetScope::Series && old.center == tft::TargetCenter::Statistic &&
              old.method == tft::TargetMethod::Standard &&
              old.transformation == tft::TargetTransformation::None);
  nlohmann::json unknown_center = ds.transforms().to_json();
  unknown_center["target_normalizer"]["center"] = "first";
  TFT_ASSERT_THROWS_WITH(tft::DataTransforms::from_json(unknown_center), tft::DataError,
                         "target_normalizer.center: unknown value \"first\" (expected one of: "
                         "statistic, last)");
}

// ---------------------------------------------------------------------------------------
// Derived features and samples

TFT_TEST(test_derived_features_and_sample_values) {
  TrainConfig c = base_config();
  c.data.time_column = "date";
  // The target as it is (scaling none): the sample shows the file's values.
  c.data.target_normalizer.scope = tft::TargetScope::Series;
  c.data.target_normalizer.center = tft::TargetCenter::Statistic;
  c.data.group_columns.clear();
  c.data.known_reals = {"month", "relative_time_idx"};
  c.data.known_categoricals = {{"day_of_week", 0}, {"hour", 0}};
  c.data.scaling = tft::ScalingMode::None;
  c.windows.encoder_length = 2;
  c.windows.prediction_length = 2;
  // 2021-12-31 is a Friday (4). The offset row is written as local 23:00 on a Saturday.
  const std::string text =
      "date,y\n2021-12-30T10:00Z,1\n2021-12-31T11:00:00Z,2\n2022-01-01T23:00:00-05:00,3\n"
      "2022-01-03T01:30:00+01:00,4\n2022-01-04,5\n";
  const TimeSeriesDataset ds = load(text, c);
  assert_true(ds.time_kind() == tft::TimeKind::DateTime);
  const std::vector<float>& month = ds.real_column("month");
  assert_true(month[0] == 12.0f && month[2] == 1.0f);
  const std::vector<std::int32_t>& dow = ds.categorical_column("day_of_week");
  const tft::CategoricalEncoder& dow_enc = ds.transforms().encoders.at("day_of_week");
  assert_int_equal(dow_enc.cardinality(), 8);  // 0..6 plus unknown, whatever the data holds
  assert_int_equal(dow[1], dow_enc.encode("4"));  // Friday
  assert_int_equal(dow[2], dow_enc.encode("5"));  // Saturday, local time
  assert_int_equal(dow[3], dow_enc.encode("0"));  // Monday
  const std::vector<std::int32_t>& hour = ds.categorical_column("hour");
  assert_int_equal(hour[2], ds.transforms().encoders.at("hour").encode("23"));
  assert_int_equal(hour[4], ds.transforms().encoders.at("hour").encode("0"));
  assert_string_equal(ds.format_time(ds.times()[2]).c_str(), "2022-01-02T04:00:00Z");
  // Date-times read without a zone are written back without one.
  {
    TrainConfig naive = base_config();
    naive.data.time_column = "date";
    naive.data.group_columns.clear();
    const TimeSeriesDataset local =
        load("date,y\n2022-01-01T10:00,1\n2022-01-01T11:00,2\n2022-01-01T12:00,3\n"
             "2022-01-01T13:00,4\n2022-01-01T14:00:30.5,5\n",
             naive);
    assert_string_equal(local.format_time(local.times()[0]).c_str(), "2022-01-01T10:00:00");
    assert_string_equal(local.format_time(local.times()[4]).c_str(), "2022-01-01T14:00:30.500000");
  }
  assert_string_equal(ds.series()[0].label.c_str(), "(all rows)");

  // One sample, window start 1: encoder rows 1, 2; decoder rows 3, 4.
  const tft::BatchWidths w = ds.widths();
  assert_int_equal(w.encoder_reals, 3);  // month, relative_time_idx, y
  assert_int_equal(w.decoder_reals, 2);
  assert_int_equal(w.encoder_categoricals, 2);
  std::vector<float> er(2 * 3);
  std::vector<std::int64_t> ec(2 * 2);
  std::vector<float> dr(2 * 2);
  std::vector<std::int64_t> dc(2 * 2);
  std::vector<float> targets(2);
  std::vector<std::int64_t> times(2);
  tft::SampleBuffers out;
  out.encoder_reals = er.data();
  out.encoder_categoricals = ec.data();
  out.decoder_reals = dr.data();
  out.decoder_categoricals = dc.data();
  out.targets = targets.data();
  out.decoder_times = times.data();
  ds.fill_sample(Window{0, 1}, out);
  const std::vector<float> expected_er = {12, -1.0f, 2, 1, -0.5f, 3};
  for (std::size_t i = 0; i < er.size(); ++i) assert_true(er[i] == expected_er[i]);
  const std::vector<float> expected_dr = {1, 0.0f, 1, 0.5f};
  for (std::size_t i = 0; i < dr.size(); ++i) assert_true(dr[i] == expected_dr[i]);
  assert_true(targets[0] == 4.0f && targets[1] == 5.0f);
  assert_true(times[0] == ds.times()[3] && times[1] == ds.times()[4]);
  assert_int_equal(ec[0], dow[1]);
  assert_int_equal(dc[1], hour[3]);

  // Date-only times print as dates.
  TrainConfig d = base_config();
  d.data.time_column = "date";
  d.data.group_columns.clear();
  const TimeSeriesDataset dates =
      load("date,y\n2020-01-01,1\n2020-01-02,1\n2020-01-03,1\n2020-01-04,1\n2020-01-05,1\n", d);
  assert_true(dates.time_kind() == tft::TimeKind::Date);
  assert_string_equal(dates.format_time(dates.times()[4]).c_str(), "2020-01-05");
}

TFT_TEST(test_file_loading_and_memory_figures) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string path = dir + "/tft_test_dataset.csv";
  {
    std::ofstream out(path);
    out << "g,t,y\n";
    for (int s = 0; s < 4; ++s) out << series_rows("S" + std::to_string(s), 200, [](int t) {
      return std::sin(t * 0.1);
    });
  }
  TrainConfig c = base_config();
  c.data.path = path;
  c.windows.encoder_length = 24;
  c.windows.prediction_length = 6;
  const TimeSeriesDataset ds = TimeSeriesDataset::load(c);
  assert_int_equal(ds.num_rows(), 800);
  assert_int_equal(ds.training_windows().size(), 4 * (200 - 30 + 1));
  // Index ranges: the data is stored once; materialised windows would be several times bigger.
  assert_true(ds.storage_bytes() < ds.materialized_window_bytes() / 5);
  std::remove(path.c_str());
  c.data.path = dir + "/tft_no_such_file.csv";
  TFT_ASSERT_THROWS_WITH(TimeSeriesDataset::load(c), tft::IoError, "cannot read data file");
  // The config is validated first.
  c.windows.encoder_length = 0;
  TFT_ASSERT_THROWS_WITH(load(two_series(), c), tft::ConfigError,
                         "windows.encoder_length: must be at least 1");
}

// ---------------------------------------------------------------------------------------
// Sampling

TFT_TEST(test_deterministic_sampling) {
  std::vector<Window> windows;
  for (std::uint32_t i = 0; i < 100; ++i) windows.push_back(Window{i % 7, i});
  const tft::WindowSampler sampler(windows, 32, true, 42);
  assert_int_equal(sampler.num_batches(), 4);
  const auto e0 = sampler.epoch_order(0);
  const auto e0_again = tft::WindowSampler(windows, 32, true, 42).epoch_order(0);
  const auto e1 = sampler.epoch_order(1);
  assert_true(e0 == e0_again);
  assert_true(e0 != e1);
  assert_true(e0 != windows);
  assert_true(tft::WindowSampler(windows, 32, true, 43).epoch_order(0) != e0);
  // A permutation: every window exactly once.
  for (const auto& order : {e0, e1}) {
    std::vector<std::uint32_t> starts;
    for (const Window& w : order) starts.push_back(w.start);
    std::sort(starts.begin(), starts.end());
    for (std::uint32_t i = 0; i < 100; ++i) assert_int_equal(starts[i], i);
  }
  // The same sequence on every platform (mt19937_64, seed_seq and the shuffle are fully
  // specified): pinned values.
  const std::uint32_t pinned[] = {52, 73, 49, 12};
  for (std::size_t i = 0; i < 4; ++i) assert_int_equal(e0[i].start, pinned[i]);
  const auto batches = sampler.epoch_batches(3);
  assert_int_equal(batches.size(), 4);
  assert_int_equal(batches[0].size(), 32);
  assert_int_equal(batches[3].size(), 4);
  assert_true(batches[0][0] == sampler.epoch_order(3)[0]);
  // Unshuffled: the given order.
  assert_true(tft::WindowSampler(windows, 10, false, 42).epoch_order(5) == windows);
  TFT_ASSERT_THROWS_WITH(tft::WindowSampler(windows, 0, true, 1), tft::ConfigError,
                         "training.batch_size: must be at least 1 (got 0)");

  std::mt19937_64 rng(7);
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 3000; ++i) ++counts[tft::uniform_below(rng, 3)];
  for (int n : counts) assert_true(n > 900 && n < 1100);
}

// ---------------------------------------------------------------------------------------
// The shipped example data, through the YAML of docs/config.md

TFT_TEST(test_example_data_loads) {
  const std::string dir = TFT_EXAMPLES_DATA_DIR;
  const TrainConfig sp500 = tft::load_train_config_string(
      "data:\n"
      "  path: sp500-2000.csv\n"
      "  time_column: date\n"
      "  target: close\n"
      "  known_reals: [relative_time_idx]\n"
      "  known_categoricals: [day_of_week, month]\n"
      "  unknown_reals: [open, high, low, volume]\n"
      "windows: {encoder_length: 120, prediction_length: 10}\n"
      "split: {validation_fraction: 0.15}\n",
      dir);
  const TimeSeriesDataset s = TimeSeriesDataset::load(sp500);
  assert_int_equal(s.num_rows(), 5105);
  assert_int_equal(s.series().size(), 1);
  assert_true(s.time_kind() == tft::TimeKind::Date);
  assert_string_equal(s.format_time(s.times().front()).c_str(), "2000-01-03");
  assert_string_equal(s.format_time(s.times().back()).c_str(), "2020-04-17");
  assert_int_equal(s.series()[0].train_rows, 5105 - 765);  // floor(0.15 * 5105) = 765
  assert_int_equal(s.training_windows().size(), 5105 - 765 - 130 + 1);
  assert_int_equal(s.validation_windows().size(), 765 - 10 + 1);
  assert_true(std::fabs(s.real_column("close").front() - 1455.219971f) < 1e-3f);
  // Weekdays only: Saturday and Sunday never occur, but keep their codes (fixed vocabulary).
  const auto& dow = s.categorical_column("day_of_week");
  const tft::CategoricalEncoder& dow_enc = s.transforms().encoders.at("day_of_week");
  for (std::int32_t code : dow) assert_true(code >= dow_enc.encode("0") && code <= dow_enc.encode("4"));

  const TrainConfig multi = tft::load_train_config_string(
      "data:\n"
      "  path: multiseries.csv\n"
      "  time_column: date\n"
      "  group_columns: [store]\n"
      "  target: sales\n"
      "  static_reals: [store_size]\n"
      "  static_categoricals: [store, region]\n"
      "  known_reals: [price, relative_time_idx]\n"
      "  known_categoricals: [promo, day_of_week, {name: month, embedding_dim: 4}]\n"
      "  unknown_reals: [footfall]\n"
      "windows:\n  encoder_length: 60\n  prediction_length: 14\n"
      "split:\n  validation_steps: 90\n",
      dir);
  const TimeSeriesDataset m = TimeSeriesDataset::load(multi);
  assert_int_equal(m.series().size(), 12);
  assert_int_equal(m.num_rows(), 12 * 1096);
  assert_int_equal(m.training_windows().size(), 12 * (1096 - 90 - 74 + 1));
  assert_int_equal(m.validation_windows().size(), 12 * (90 - 14 + 1));
  assert_int_equal(m.schema().static_categoricals[0].cardinality, 13);
  assert_int_equal(m.schema().known_categoricals[2].embedding_dim, 4);
  assert_int_equal(m.widths().encoder_reals, 4);  // footfall, price, relative_time_idx, sales
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_and_duplicated_columns),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_unsorted_and_duplicated_times),
      cmocka_unit_test(test_series_shorter_than_a_window),
      cmocka_unit_test(test_static_columns_must_be_constant),
      cmocka_unit_test(test_derived_feature_errors),
      cmocka_unit_test(test_forward_fill_and_drop_row),
      cmocka_unit_test(test_drop_row_removes_a_series_left_without_rows),
      cmocka_unit_test(test_windows_and_split_do_not_leak),
      cmocka_unit_test(test_append_series_windows_directly),
      cmocka_unit_test(errors_hint_at_the_likely_mistake),
      cmocka_unit_test(target_outside_the_transformation_domain_is_an_error),
      cmocka_unit_test(test_scaling_fitted_on_training_part_only),
      cmocka_unit_test(test_scaler_round_trip),
      cmocka_unit_test(test_categorical_encoder_and_unknown_bucket),
      cmocka_unit_test(test_transforms_json_and_fitted_loading),
      cmocka_unit_test(test_derived_features_and_sample_values),
      cmocka_unit_test(test_file_loading_and_memory_figures),
      cmocka_unit_test(test_deterministic_sampling),
      cmocka_unit_test(test_example_data_loads),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
