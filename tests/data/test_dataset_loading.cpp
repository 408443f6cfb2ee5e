// TimeSeriesDataset loading: missing-value policies, derived features and the values of one
// sample, a file on disk and the memory figures, and the shipped example data through the
// YAML of docs/config.md.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "data/categorical_encoder.h"
#include "data/time_series_dataset.h"

#include "dataset_support.h"
#include "support/test_files.h"
#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using tft::Window;
using namespace tft_test;

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
  const TimeSeriesDataset dropped = load(text + "A,5,6,1,a\nA,6,7,1,a\nA,7,8,1,a\nB,5,4,1,c\n", c);
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
  const std::string text =
      "g,t,y,z\nB,0,,\nA,0,1,3\nA,1,2,3\nA,2,3,3\nA,3,4,3\nA,4,5,3\n"
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
  assert_int_equal(dow_enc.cardinality(), 8);     // 0..6 plus unknown, whatever the data holds
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
    const TimeSeriesDataset local = load(
        "date,y\n2022-01-01T10:00,1\n2022-01-01T11:00,2\n2022-01-01T12:00,3\n"
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
    for (int s = 0; s < 4; ++s)
      out << series_rows("S" + std::to_string(s), 200, [](int t) { return std::sin(t * 0.1); });
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
// The shipped example data, through the YAML of docs/config.md

TFT_TEST(test_example_data_loads) {
  const std::string dir = tft::testing::path_from_environment("TFT_EXAMPLES_DATA_DIR").string();
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
  for (std::int32_t code : dow)
    assert_true(code >= dow_enc.encode("0") && code <= dow_enc.encode("4"));

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
      cmocka_unit_test(test_forward_fill_and_drop_row),
      cmocka_unit_test(test_drop_row_removes_a_series_left_without_rows),
      cmocka_unit_test(test_derived_features_and_sample_values),
      cmocka_unit_test(test_file_loading_and_memory_figures),
      cmocka_unit_test(test_example_data_loads),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
