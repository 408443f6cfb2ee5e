// Data in memory through the Arrow C stream interface (data/arrow_data.h, arrow_row_source.h),
// against the same table read from its Parquet file (shop.parquet, written by
// write_parquet_cases.py into TFT_PARQUET_CASES):
//   - the table, exported as a C stream in record batches of 7 rows (a dictionary column,
//     nulls, date32 days), gives the Parquet file's dataset bit for bit, trains the same model
//     (final loss and weights bitwise) and forecasts alike; data.path is not needed;
//   - each fault (a schema without a configured column, a column of an unsupported type, a null
//     where a value is needed, get_next failing on a later batch or get_schema failing, an
//     empty stream, a batch of a negative length, a released or NULL stream, a stream handed over
//     twice, dates out of range) is an error naming the stream, the row and the column, and the
//     stream's release runs exactly once.
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>

#include "common/error.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/arrow_data.h"
#include "train/trainer.h"

#include "data/shop_case.h"
#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TimeSeriesDataset;
using tft::TrainConfig;

namespace {

std::string shop_parquet() { return (tft::testing::parquet_cases() / "shop.parquet").string(); }

TrainConfig shop_config(const std::string& path) { return tft::testing::shop_config(path); }

std::shared_ptr<arrow::Table> shop_table() {
  auto file = arrow::io::ReadableFile::Open(shop_parquet()).ValueOrDie();
  std::unique_ptr<parquet::arrow::FileReader> reader =
      parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  return reader->ReadTable().ValueOrDie();
}

// Record batches of `rows` rows; after `good_batches` batches (-1: never) the reader fails.
class BatchesThenFailure final : public arrow::RecordBatchReader {
 public:
  BatchesThenFailure(std::shared_ptr<arrow::Table> table, std::int64_t rows, int good_batches)
      : table_(std::move(table)), reader_(*table_), good_batches_(good_batches) {
    reader_.set_chunksize(rows);
  }
  std::shared_ptr<arrow::Schema> schema() const override { return table_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (good_batches_ >= 0 && given_ == good_batches_) {
      return arrow::Status::IOError("the database went away");
    }
    ++given_;
    return reader_.ReadNext(batch);
  }

 private:
  std::shared_ptr<arrow::Table> table_;
  arrow::TableBatchReader reader_;
  int good_batches_;
  int given_ = 0;
};

// A C stream that counts its release calls: the producer's stream behind a wrapper.
struct Counted {
  ArrowArrayStream inner{};
  int releases = 0;
  bool fail_schema = false;
};

ArrowArrayStream counted_stream(Counted& counted) {
  ArrowArrayStream s{};
  s.get_schema = [](ArrowArrayStream* self, ArrowSchema* out) {
    auto* c = static_cast<Counted*>(self->private_data);
    if (c->fail_schema) return EIO;
    return c->inner.get_schema(&c->inner, out);
  };
  s.get_next = [](ArrowArrayStream* self, ArrowArray* out) {
    auto* c = static_cast<Counted*>(self->private_data);
    return c->inner.get_next(&c->inner, out);
  };
  s.get_last_error = [](ArrowArrayStream* self) -> const char* {
    auto* c = static_cast<Counted*>(self->private_data);
    return c->fail_schema ? "no schema today" : c->inner.get_last_error(&c->inner);
  };
  s.release = [](ArrowArrayStream* self) {
    auto* c = static_cast<Counted*>(self->private_data);
    ++c->releases;
    c->inner.release(&c->inner);
    self->release = nullptr;
  };
  s.private_data = &counted;
  return s;
}

// Reads `table` through a C stream (batches of 7 rows, failing after `good_batches`): the data,
// or the error's message; the stream was released exactly once, and marked released at once.
std::shared_ptr<const tft::ArrowData> read_stream(std::shared_ptr<arrow::Table> table,
                                                  int good_batches = -1, bool fail_schema = false) {
  Counted counted;
  counted.fail_schema = fail_schema;
  auto reader = std::make_shared<BatchesThenFailure>(std::move(table), 7, good_batches);
  if (!arrow::ExportRecordBatchReader(reader, &counted.inner).ok()) fail_msg("export failed");
  ArrowArrayStream stream = counted_stream(counted);
  std::shared_ptr<const tft::ArrowData> data;
  try {
    data = tft::ArrowData::read(&stream, "arrow stream");
  } catch (...) {
    assert_null(stream.release);
    assert_int_equal(counted.releases, 1);
    throw;
  }
  assert_null(stream.release);
  assert_int_equal(counted.releases, 1);
  return data;
}

// Reads `batches` (of the first one's schema) through a C stream; released exactly once.
std::shared_ptr<const tft::ArrowData> read_batches(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  Counted counted;
  auto reader = arrow::RecordBatchReader::Make(batches, batches.front()->schema()).ValueOrDie();
  if (!arrow::ExportRecordBatchReader(reader, &counted.inner).ok()) fail_msg("export failed");
  ArrowArrayStream stream = counted_stream(counted);
  try {
    return tft::ArrowData::read(&stream, "arrow stream");
  } catch (...) {
    assert_int_equal(counted.releases, 1);
    throw;
  }
}

TimeSeriesDataset load(const tft::ArrowData& data, const TrainConfig& config) {
  return TimeSeriesDataset::from_source(*data.rows(), config);
}

void expect_error(const std::shared_ptr<arrow::Table>& table, const TrainConfig& config,
                  const char* message) {
  const auto data = read_stream(table);
  TFT_ASSERT_THROWS_WITH(load(*data, config), tft::DataError, message);
}

// `table` with its date32 `day` column replaced by consecutive days from 2021-01-01 as `type`
// (date32 or date64), row 3's value by `row3` (days or milliseconds).
std::shared_ptr<arrow::Table> with_days(const std::shared_ptr<arrow::Table>& table,
                                        const std::shared_ptr<arrow::DataType>& type,
                                        std::int64_t row3) {
  constexpr std::int64_t kFirstDay = 18628;  // 2021-01-01
  const bool days = type->id() == arrow::Type::DATE32;
  std::unique_ptr<arrow::ArrayBuilder> builder;
  assert_true(arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder).ok());
  for (std::int64_t i = 0; i < table->num_rows(); ++i) {
    const std::int64_t value = i == 3 ? row3 : days ? kFirstDay + i : (kFirstDay + i) * 86400000;
    const arrow::Status appended =
        days ? static_cast<arrow::Date32Builder&>(*builder).Append(static_cast<std::int32_t>(value))
             : static_cast<arrow::Date64Builder&>(*builder).Append(value);
    assert_true(appended.ok());
  }
  const int day = table->schema()->GetFieldIndex("day");
  return table
      ->SetColumn(day, arrow::field("day", type),
                  std::make_shared<arrow::ChunkedArray>(builder->Finish().ValueOrDie()))
      .ValueOrDie();
}

}  // namespace

TFT_TEST(test_a_stream_gives_the_parquet_files_dataset_model_and_forecasts) {
  const auto data = read_stream(shop_table());
  assert_int_equal(data->num_rows(), 240);
  const TrainConfig in_memory = shop_config("");  // no data.path: the data comes in memory
  const TrainConfig from_file = shop_config(shop_parquet());
  TimeSeriesDataset a = load(*data, in_memory);
  TimeSeriesDataset b = TimeSeriesDataset::load(from_file);
  assert_true(a.times() == b.times());
  assert_true(a.transforms() == b.transforms());
  assert_true(a.training_windows() == b.training_windows());
  assert_true(a.validation_windows() == b.validation_windows());
  assert_int_equal(a.filled_values(), b.filled_values());
  for (const char* name : {"sales", "price", "promo"}) {
    assert_true(a.real_column(name) == b.real_column(name));
  }
  // The data is read again for each use, from the same batches.
  assert_true(load(*data, in_memory).times() == a.times());

  const fs::path dir = tft::testing::scratch_dir("arrow_stream_training");
  TrainConfig memory_run = in_memory;
  memory_run.output.directory = (dir / "memory").string();
  TrainConfig file_run = from_file;
  file_run.output.directory = (dir / "file").string();
  tft::Trainer from_stream(memory_run, std::move(a));
  tft::Trainer from_parquet(file_run, std::move(b));
  const tft::TrainReport ra = from_stream.train();
  const tft::TrainReport rb = from_parquet.train();
  std::printf("  final loss: stream %.17g, parquet %.17g\n", ra.final_validation_loss,
              rb.final_validation_loss);
  assert_memory_equal(&ra.final_validation_loss, &rb.final_validation_loss, sizeof(double));
  assert_true(tft::testing::same_weights(from_stream.model(), from_parquet.model()));
  assert_true(tft::testing::forecasts_bitwise_equal(from_stream.predict(), from_parquet.predict()));
  // Forecasting other data in memory with the trainer's transforms.
  const TimeSeriesDataset again =
      TimeSeriesDataset::from_source(*data->rows(), in_memory, &from_stream.dataset().transforms());
  assert_true(
      tft::testing::forecasts_bitwise_equal(from_stream.predict(again), from_parquet.predict()));
  fs::remove_all(dir);
}

TFT_TEST(test_a_file_run_without_data_path_says_so) {
  TFT_ASSERT_THROWS_WITH(TimeSeriesDataset::load(shop_config("")), tft::ConfigError,
                         "data.path: required to read the data from a file");
}

TFT_TEST(test_schema_and_type_faults_name_the_stream_and_column) {
  const std::shared_ptr<arrow::Table> table = shop_table();
  const TrainConfig config = shop_config("");
  const int price = table->schema()->GetFieldIndex("price");
  expect_error(table->RemoveColumn(price).ValueOrDie(), config,
               "arrow stream: column 'price': not in the header");
  // price as binary: a type tftrain does not read, whatever the bytes say.
  arrow::BinaryBuilder binary;
  for (std::int64_t i = 0; i < table->num_rows(); ++i) assert_true(binary.Append("1.5").ok());
  const auto as_binary =
      table->SetColumn(price, arrow::field("price", arrow::binary()),
                       std::make_shared<arrow::ChunkedArray>(binary.Finish().ValueOrDie()));
  expect_error(as_binary.ValueOrDie(), config,
               "arrow stream: column 'price': the Arrow type binary is not supported");
  TrainConfig no_fill = config;
  no_fill.data.missing_values = tft::MissingValuePolicy::Error;
  expect_error(table, no_fill,
               "arrow stream: row 4: column 'price': null value (data.missing_values: error)");
  // Dates past what microseconds since 1970 hold in 64 bits (fuzz_arrow_stream found the
  // date32 overflow).
  expect_error(with_days(table, arrow::date32(), 2147483647), config,
               "arrow stream: row 3: column 'day': date32 value 2147483647 days is out of range");
  expect_error(with_days(table, arrow::date64(), 9223372036828800000), config,
               "arrow stream: row 3: column 'day': date64 value 9223372036828800000 ms is out of "
               "range");
}

TFT_TEST(test_stream_faults_are_errors_and_release_once) {
  // get_next fails on the third batch: rows 0-13 were read, the message is the stream's own.
  TFT_ASSERT_THROWS_WITH(read_stream(shop_table(), 2), tft::DataError,
                         "arrow stream: row 14: the stream failed: IOError: the database went "
                         "away");
  TFT_ASSERT_THROWS_WITH(read_stream(shop_table(), 0), tft::DataError,
                         "arrow stream: row 0: the stream failed:");
  TFT_ASSERT_THROWS_WITH(read_stream(shop_table(), -1, /*fail_schema=*/true), tft::DataError,
                         "arrow stream: cannot read the stream's schema: no schema today");
  const std::shared_ptr<arrow::Table> table = shop_table();
  TFT_ASSERT_THROWS_WITH(read_stream(table->Slice(0, 0)), tft::DataError,
                         "arrow stream: the stream holds no rows");
  // A batch of a negative length (fuzz_arrow_stream found it).
  TFT_ASSERT_THROWS_WITH(
      read_batches({arrow::RecordBatch::Make(arrow::schema({}), -5, arrow::ArrayVector{})}),
      tft::DataError,
      "arrow stream: row 0: the stream gave a malformed record batch: a "
      "length of -5");
  // Released (or handed over once already) and NULL streams: nothing is called.
  ArrowArrayStream released{};
  TFT_ASSERT_THROWS_WITH(tft::ArrowData::read(&released, "arrow stream"), tft::InvalidArgumentError,
                         "the stream is released already");
  TFT_ASSERT_THROWS_WITH(tft::ArrowData::read(nullptr, "arrow stream"), tft::InvalidArgumentError,
                         "the stream is NULL");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_stream_gives_the_parquet_files_dataset_model_and_forecasts),
      cmocka_unit_test(test_a_file_run_without_data_path_says_so),
      cmocka_unit_test(test_schema_and_type_faults_name_the_stream_and_column),
      cmocka_unit_test(test_stream_faults_are_errors_and_release_once),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
