// Parquet input (data/parquet_source.h) against the CSV reader, on files that pyarrow wrote
// (write_parquet_cases.py, run by ctest as this test's fixture into TFT_PARQUET_CASES):
//   - a Parquet file and a CSV with the same values give the same dataset, bit for bit, with
//     dictionary, integer and boolean columns, nulls, dates, zoned nanosecond timestamps across
//     a daylight-saving change, several row groups and record batches that cut through them;
//     they train the same model, bit for bit, and a saved model forecasts either alike;
//   - timestamps of every unit and date64 read as the same times;
//   - each fault (a null or NaN where a value is needed, an unsupported or wrong type, a
//     nanosecond fraction, a duplicate time, a file that is not Parquet, truncated or with
//     flipped bits) is an error naming the file, the column, the row group and the row;
//   - data.format and the extension choose the reader.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/data_file.h"
#include "readers/parquet_source.h"
#include "report/forecast.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "data/shop_case.h"
#include "train/train_test_support.h"

#include "support/test_files.h"
#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TimeSeriesDataset;
using tft::TrainConfig;

namespace {

fs::path cases() { return tft::testing::path_from_environment("TFT_PARQUET_CASES"); }

// shop.csv / shop.parquet: 6 series (store x item), 40 days each, nulls in price.
TrainConfig shop_config(const std::string& extension) {
  return tft::testing::shop_config((cases() / ("shop" + extension)).string());
}

// hourly.csv / hourly.parquet: one series, the hour of day as a feature.
TrainConfig hourly_config(const std::string& extension) {
  TrainConfig c;
  c.data.path = (cases() / ("hourly" + extension)).string();
  c.data.time_column = "when";
  c.data.target = "load";
  c.data.known_categoricals = {{"hour", 0}, {"day_of_week", 0}};
  c.windows.encoder_length = 6;
  c.windows.prediction_length = 2;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 4;
  return c;
}

// A file of fault cases: integer time t, target y, row groups of 5 rows.
TrainConfig fault_config(const std::string& name) {
  TrainConfig c;
  c.data.path = (cases() / (name + ".parquet")).string();
  c.data.time_column = "t";
  c.data.target = "y";
  c.windows.encoder_length = 2;
  c.windows.prediction_length = 1;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 0;
  return c;
}

// Every stored column, series, window and transform of two datasets is equal.
void assert_same_dataset(const TimeSeriesDataset& a, const TimeSeriesDataset& b,
                         const TrainConfig& config) {
  assert_true(a.times() == b.times());
  assert_int_equal(a.series().size(), b.series().size());
  for (std::size_t s = 0; s < a.series().size(); ++s) {
    assert_true(a.series()[s].group_values == b.series()[s].group_values);
    assert_int_equal(a.series()[s].offset, b.series()[s].offset);
    assert_int_equal(a.series()[s].length, b.series()[s].length);
    assert_int_equal(a.series()[s].train_rows, b.series()[s].train_rows);
  }
  assert_true(a.training_windows() == b.training_windows());
  assert_true(a.validation_windows() == b.validation_windows());
  assert_true(a.transforms() == b.transforms());
  assert_true(a.time_kind() == b.time_kind());
  assert_int_equal(a.dropped_rows(), b.dropped_rows());
  assert_int_equal(a.filled_values(), b.filled_values());
  std::vector<std::string> reals = config.data.known_reals;
  reals.push_back(config.data.target);
  for (const std::string& name : reals) {
    if (name == "relative_time_idx") continue;
    assert_true(a.real_column(name) == b.real_column(name));
  }
  for (const auto& column : config.data.known_categoricals) {
    assert_true(a.categorical_column(column.name) == b.categorical_column(column.name));
  }
}

TimeSeriesDataset load_in_batches(const TrainConfig& config, std::size_t batch_rows) {
  const std::unique_ptr<tft::RowSource> source =
      tft::open_parquet_file(config.data.path, batch_rows);
  return TimeSeriesDataset::from_source(*source, config);
}

void expect_error(const TrainConfig& config, const char* message) {
  TFT_ASSERT_THROWS_WITH(TimeSeriesDataset::load(config), tft::DataError, message);
}

}  // namespace

TFT_TEST(test_parquet_and_csv_give_the_same_dataset) {
  const TrainConfig csv = shop_config(".csv");
  const TrainConfig parquet = shop_config(".parquet");
  const TimeSeriesDataset from_csv = TimeSeriesDataset::load(csv);
  const TimeSeriesDataset from_parquet = TimeSeriesDataset::load(parquet);
  assert_int_equal(from_parquet.series().size(), 6);
  assert_int_equal(from_parquet.num_rows(), 240);
  assert_true(from_parquet.filled_values() > 0);  // the nulls in price were carried forward
  assert_true(from_parquet.time_kind() == tft::TimeKind::Date);
  assert_string_equal(from_parquet.series()[0].label.c_str(), "store=north, item=7");
  assert_same_dataset(from_csv, from_parquet, csv);
  // Record batches of 7 rows cut through the row groups of 50: nothing changes.
  assert_same_dataset(from_csv, load_in_batches(parquet, 7), csv);
}

TFT_TEST(test_zoned_timestamps_follow_the_wall_clock_like_csv_offsets) {
  const TrainConfig csv = hourly_config(".csv");
  const TimeSeriesDataset from_csv = TimeSeriesDataset::load(csv);
  const TimeSeriesDataset from_parquet = TimeSeriesDataset::load(hourly_config(".parquet"));
  assert_true(from_parquet.time_kind() == tft::TimeKind::DateTime);
  assert_same_dataset(from_csv, from_parquet, csv);
  // 2021-03-28T01:00Z is 03:00 in Paris (summer time began at 02:00): hour code 3 + 1 for the
  // unknown bucket. Row 13 of the file is that instant (12:00Z on the 27th + 13 h).
  const auto& hours = from_parquet.categorical_column("hour");
  assert_int_equal(hours[12], 1 + 1);  // 00:00Z = 01:00 CET
  assert_int_equal(hours[13], 3 + 1);  // 01:00Z = 03:00 CEST
}

TFT_TEST(test_every_timestamp_unit_and_date64_read_the_same_times) {
  const TimeSeriesDataset reference = TimeSeriesDataset::load(fault_config("units_us"));
  for (const char* name : {"units_s", "units_ms", "units_ns", "units_date64"}) {
    const TimeSeriesDataset other = TimeSeriesDataset::load(fault_config(name));
    assert_true(other.times() == reference.times());
  }
  assert_true(TimeSeriesDataset::load(fault_config("units_date64")).time_kind() ==
              tft::TimeKind::Date);
  assert_string_equal(reference.format_time(reference.times()[1]).c_str(),
                      "2022-05-02T00:00:00");  // a timestamp without a zone: as read
}

TFT_TEST(test_missing_values_name_the_row_and_row_group) {
  expect_error(fault_config("null_target"),
               "null_target.parquet: row 7 (row group 1): column 'y': null value "
               "(data.missing_values: error)");
  expect_error(fault_config("nan_target"),
               "nan_target.parquet: row 3 (row group 0): column 'y': NaN value "
               "(data.missing_values: error)");
  expect_error(fault_config("null_time"),
               "null_time.parquet: row 3 (row group 0): column 't': null value (the time "
               "column needs a value in every row)");
  TrainConfig drop = fault_config("null_target");
  drop.data.missing_values = tft::MissingValuePolicy::DropRow;
  const TimeSeriesDataset dropped = TimeSeriesDataset::load(drop);
  assert_int_equal(dropped.dropped_rows(), 1);
  assert_int_equal(dropped.num_rows(), 11);
}

TFT_TEST(test_wrong_and_unsupported_types_are_errors_not_casts) {
  TrainConfig decimal = fault_config("decimal_real");
  decimal.data.known_reals = {"x"};
  expect_error(decimal,
               "decimal_real.parquet: column 'x': the Parquet type decimal128(10, 2) "
               "is not supported");
  TrainConfig list = fault_config("list_column");
  list.data.known_reals = {"x"};
  expect_error(list,
               "list_column.parquet: column 'x': the Parquet type list<element: double> is "
               "not supported");
  TrainConfig category = fault_config("float_category");
  category.data.known_categoricals = {{"c", 0}};
  expect_error(category,
               "float_category.parquet: row 0 (row group 0): column 'c': a "
               "floating-point number (0.5) cannot name a category or a series");
  TrainConfig text = fault_config("string_real");
  text.data.known_reals = {"x"};
  expect_error(text,
               "string_real.parquet: row 0 (row group 0): column 'x': a string "
               "(\"1.5\"), not a number");
  expect_error(fault_config("float_time"),
               "float_time.parquet: row 0 (row group 0): column 't': a floating-point number "
               "(0.5) cannot be a time");
  expect_error(fault_config("nanosecond_fraction"),
               "nanosecond_fraction.parquet: row 9 (row group 1): column 't': timestamp "
               "1600000000000009007 ns has a fraction of a microsecond");
  TrainConfig integer_as_iso = fault_config("units_us");
  integer_as_iso.data.time_format = tft::TimeFormat::Integer;
  expect_error(integer_as_iso,
               "units_us.parquet: row 0 (row group 0): column 't': holds dates "
               "or timestamps, but data.time_format is integer");
}

TFT_TEST(test_order_errors_name_both_rows) {
  expect_error(fault_config("duplicate_time"),
               "duplicate_time.parquet: row 7 (row group 1): column 't': duplicate time 6 in "
               "series (all rows) (also at row 6)");
}

TFT_TEST(test_damaged_files_are_errors_naming_them) {
  expect_error(fault_config("not_parquet"), "not_parquet.parquet: not a readable Parquet file");
  TrainConfig missing = fault_config("no_such_file");
  const std::string cannot_open = "cannot open '" + missing.data.path + "'";
  TFT_ASSERT_THROWS_WITH(TimeSeriesDataset::load(missing), tft::IoError, cannot_open.c_str());
}

// Truncated at 20 lengths and 400 single-bit flips across a file: each load is an error naming
// the file, or a dataset loaded whole. Never a crash or an error without the file's name.
// Returns how many flips loaded values different from the undamaged file's: Parquet checksums
// nothing unless the writer added page CRCs (which are verified).
int silent_flips(const std::string& file) {
  const fs::path original = cases() / file;
  const std::string bytes = tft::testing::read_text(original);
  const fs::path damaged = tft::testing::scratch_dir("parquet_damage") / file;
  TrainConfig config = shop_config(".parquet");
  config.data.path = damaged.string();
  const TimeSeriesDataset reference = TimeSeriesDataset::load(shop_config(".parquet"));
  int errors = 0, same = 0, different = 0;
  auto try_load = [&](const std::string& content) {
    tft::testing::write_text(damaged, content);
    try {
      const TimeSeriesDataset loaded = TimeSeriesDataset::load(config);
      const bool equal = loaded.times() == reference.times() &&
                         loaded.real_column("sales") == reference.real_column("sales") &&
                         loaded.real_column("price") == reference.real_column("price") &&
                         loaded.transforms() == reference.transforms();
      ++(equal ? same : different);
    } catch (const tft::Error& e) {
      const std::string message = e.what();
      if (message.find(damaged.string()) == std::string::npos) {
        fail_msg("an error that does not name the file: %s", message.c_str());
      }
      ++errors;
    }
  };
  for (int i = 1; i <= 20; ++i) try_load(bytes.substr(0, bytes.size() * i / 21));
  assert_int_equal(errors, 20);
  for (int i = 0; i < 400; ++i) {
    std::string flipped = bytes;
    const std::size_t at = (static_cast<std::size_t>(i) * 7919) % bytes.size();
    flipped[at] = static_cast<char>(flipped[at] ^ (1 << (i % 8)));
    try_load(flipped);
  }
  std::printf("  %s, 400 bit flips: %d errors, %d harmless, %d loaded different values\n",
              file.c_str(), errors - 20, same, different);
  fs::remove_all(damaged.parent_path());
  return different;
}

TFT_TEST(test_damaged_data_is_an_error_or_counted) {
  const int without_crc = silent_flips("shop.parquet");
  const int with_crc = silent_flips("shop_crc.parquet");
  // Measured: 68 of 400 without page CRCs, 0 with them (the flips land at the same offsets of
  // files from the pinned pyarrow, so the counts are deterministic).
  assert_true(without_crc > 0);
  assert_int_equal(with_crc, 0);
}

TFT_TEST(test_format_follows_the_config_then_the_extension) {
  tft::DataConfig d;
  d.path = "x.PQ";
  assert_true(tft::data_file_format(d) == tft::DataFileFormat::Parquet);
  d.path = "x.parquet";
  assert_true(tft::data_file_format(d) == tft::DataFileFormat::Parquet);
  d.path = "x.csv";
  assert_true(tft::data_file_format(d) == tft::DataFileFormat::Csv);
  d.format = "parquet";
  assert_true(tft::data_file_format(d) == tft::DataFileFormat::Parquet);
  d.path = "x.parquet";
  d.format = "csv";
  assert_true(tft::data_file_format(d) == tft::DataFileFormat::Csv);
  // A Parquet file read as CSV is not silently accepted.
  TrainConfig as_csv = fault_config("units_us");
  as_csv.data.format = "csv";
  TFT_ASSERT_THROWS_WITH(TimeSeriesDataset::load(as_csv), tft::DataError, "units_us.parquet");
}

TFT_TEST(test_parquet_and_csv_train_the_same_model) {
  const fs::path dir = tft::testing::scratch_dir("parquet_training");
  TrainConfig csv = shop_config(".csv");
  csv.output.directory = (dir / "csv").string();
  TrainConfig parquet = shop_config(".parquet");
  parquet.output.directory = (dir / "parquet").string();
  tft::Trainer a(csv);
  const tft::TrainReport ra = a.train();
  tft::Trainer b(parquet);
  const tft::TrainReport rb = b.train();
  std::printf("  validation loss: csv %.9g, parquet %.9g\n", ra.final_validation_loss,
              rb.final_validation_loss);
  assert_true(ra.final_validation_loss == rb.final_validation_loss);
  assert_true(tft::testing::same_weights(a.model(), b.model()));

  // The model trained on the CSV forecasts the Parquet file: the same forecasts as from the
  // CSV (a saved model reads a new file by its extension, whatever it was trained on).
  tft::SavedModel saved = tft::SavedModel::load(dir / "csv" / "model");
  const tft::Predictions from_csv =
      saved.predict(saved.load_dataset(shop_config(".csv").data.path));
  const tft::Predictions from_parquet =
      saved.predict(saved.load_dataset(shop_config(".parquet").data.path));
  assert_int_equal(from_csv.forecasts.size(), from_parquet.forecasts.size());
  assert_true(!from_csv.forecasts.empty());
  for (std::size_t i = 0; i < from_csv.forecasts.size(); ++i) {
    const tft::Forecast& x = from_csv.forecasts[i];
    const tft::Forecast& y = from_parquet.forecasts[i];
    assert_true(x.series == y.series && x.origin == y.origin && x.future == y.future);
    assert_true(x.times == y.times && x.values == y.values);
    assert_memory_equal(x.actuals.data(), y.actuals.data(), x.actuals.size() * sizeof(float));
  }
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parquet_and_csv_give_the_same_dataset),
      cmocka_unit_test(test_zoned_timestamps_follow_the_wall_clock_like_csv_offsets),
      cmocka_unit_test(test_every_timestamp_unit_and_date64_read_the_same_times),
      cmocka_unit_test(test_missing_values_name_the_row_and_row_group),
      cmocka_unit_test(test_wrong_and_unsupported_types_are_errors_not_casts),
      cmocka_unit_test(test_order_errors_name_both_rows),
      cmocka_unit_test(test_damaged_files_are_errors_naming_them),
      cmocka_unit_test(test_damaged_data_is_an_error_or_counted),
      cmocka_unit_test(test_format_follows_the_config_then_the_extension),
      cmocka_unit_test(test_parquet_and_csv_train_the_same_model),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
