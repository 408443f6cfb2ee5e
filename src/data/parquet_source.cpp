#include "data/parquet_source.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <vector>

#include <arrow/array.h>
#include <arrow/compute/api_scalar.h>
#include <arrow/compute/initialize.h>
#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/config.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "common/error.h"

namespace tft {

namespace {

constexpr std::int64_t kMicrosPerDay = std::int64_t{86400} * 1000000;
constexpr std::int64_t kMillisPerDay = std::int64_t{86400} * 1000;

// Arrow's compute functions (local_timestamp) are registered once per process.
void initialize_arrow_compute() {
  static std::once_flag once;
  static arrow::Status status;
  std::call_once(once, [] { status = arrow::compute::Initialize(); });
  if (!status.ok()) throw DataError("Arrow's compute functions: " + status.ToString());
}

bool is_supported(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::BOOL:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: return true;
    case arrow::Type::DICTIONARY: {
      const auto& value_type = *static_cast<const arrow::DictionaryType&>(type).value_type();
      return is_supported(value_type) && value_type.id() != arrow::Type::DICTIONARY;
    }
    default: return false;
  }
}

// A selected column and its current batch.
struct Column {
  int header_index = 0;
  std::string name;
  std::shared_ptr<arrow::DataType> type;
  std::shared_ptr<arrow::Array> values;
  // Zoned timestamps: the same instants on the zone's wall clock (naive), for calendar fields.
  std::shared_ptr<arrow::Array> local;
};

class ParquetRowSource final : public RowSource {
 public:
  ParquetRowSource(std::string path, std::size_t batch_rows)
      : path_(std::move(path)), batch_rows_(static_cast<std::int64_t>(batch_rows)) {
    open();
  }

  const std::string& name() const override { return path_; }
  const std::vector<std::string>& header() const override { return header_; }

  void select_columns(const std::vector<int>& columns) override {
    columns_.clear();
    for (const int index : columns) {
      const std::shared_ptr<arrow::Field>& field = schema_->field(index);
      if (!is_supported(*field->type())) {
        fail_file("column '" + field->name() + "': the Parquet type " + field->type()->ToString() +
                  " is not supported (integers, booleans, floats, doubles, strings, "
                  "dictionaries of them, dates and timestamps are); cast it when writing the "
                  "file");
      }
      Column column;
      column.header_index = index;
      column.name = field->name();
      column.type = field->type();
      columns_.push_back(std::move(column));
    }
    batches_.reset();
  }

  std::size_t row_capacity() const override { return static_cast<std::size_t>(rows_in_file_); }

  bool next(std::vector<Cell>& cells, std::size_t& position) override {
    while (row_in_batch_ >= rows_in_batch_) {
      if (!read_batch()) return false;
    }
    cells.resize(header_.size());
    const std::size_t this_row = static_cast<std::size_t>(rows_before_batch_ + row_in_batch_) + 1;
    for (const Column& column : columns_) {
      fill(cells[static_cast<std::size_t>(column.header_index)], column, *column.values,
           column.local.get(), row_in_batch_, this_row);
    }
    ++row_in_batch_;
    position = this_row;
    return true;
  }

  std::string where(std::size_t position) const override {
    if (position == 0) return path_;
    return path_ + ": " + position_text(position) + " (row group " +
           std::to_string(row_group_of(position - 1)) + ")";
  }
  std::size_t header_position() const override { return 0; }
  std::string position_text(std::size_t position) const override {
    return "row " + std::to_string(position - 1);
  }

 private:
  [[noreturn]] void fail_file(const std::string& what) const {
    throw DataError(path_ + ": " + what);
  }
  [[noreturn]] void fail_at(std::size_t position, const std::string& column,
                            const std::string& what) const {
    throw DataError(where(position) + ": column '" + column + "': " + what);
  }

  void open() {
    {
      std::ifstream probe(path_, std::ios::binary);
      if (!probe) {
        throw IoError("cannot open '" + path_ + "': " + std::strerror(errno));
      }
    }
    try {
      auto file = arrow::io::ReadableFile::Open(path_);
      if (!file.ok()) throw IoError("cannot open '" + path_ + "': " + file.status().message());
      parquet::ArrowReaderProperties properties;
      properties.set_batch_size(batch_rows_);
      // Pre-buffering would fetch the column chunks of every row group read at once (the
      // whole file, for a reader of all row groups): read them as they are decoded instead.
      properties.set_pre_buffer(false);
      // Pages written with a CRC (pyarrow's write_page_checksum=True) are verified; Parquet
      // writes none by default.
      parquet::ReaderProperties reader_properties = parquet::default_reader_properties();
      reader_properties.set_page_checksum_verification(true);
      parquet::arrow::FileReaderBuilder builder;
      const arrow::Status opened = builder.Open(*file, reader_properties);
      if (!opened.ok()) fail_file("not a readable Parquet file: " + opened.message());
      builder.memory_pool(arrow::default_memory_pool())->properties(properties);
      auto reader = builder.Build();
      if (!reader.ok()) fail_file("not a readable Parquet file: " + reader.status().message());
      reader_ = std::move(*reader);
      const arrow::Status schema = reader_->GetSchema(&schema_);
      if (!schema.ok()) fail_file("unreadable schema: " + schema.message());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      // ParquetException, and what a damaged footer makes the Thrift decoder throw
      // (std::length_error, std::bad_alloc for an absurd length).
      fail_file(std::string("not a readable Parquet file: ") + e.what());
    }
    for (const auto& field : schema_->fields()) header_.push_back(field->name());
    const std::shared_ptr<parquet::FileMetaData> metadata = reader_->parquet_reader()->metadata();
    rows_in_file_ = metadata->num_rows();
    std::int64_t end = 0;
    for (int g = 0; g < metadata->num_row_groups(); ++g) {
      end += metadata->RowGroup(g)->num_rows();
      row_group_ends_.push_back(end);
    }
  }

  std::size_t row_group_of(std::size_t row) const {
    const auto it = std::upper_bound(row_group_ends_.begin(), row_group_ends_.end(),
                                     static_cast<std::int64_t>(row));
    return static_cast<std::size_t>(it - row_group_ends_.begin());
  }

  // The next record batch of the selected columns; false at the end of the file.
  bool read_batch() {
    rows_before_batch_ += rows_in_batch_;
    rows_in_batch_ = 0;
    row_in_batch_ = 0;
    const std::size_t next_row = static_cast<std::size_t>(rows_before_batch_) + 1;
    try {
      if (!batches_) {
        std::vector<int> row_groups(row_group_ends_.size());
        for (std::size_t g = 0; g < row_groups.size(); ++g) row_groups[g] = static_cast<int>(g);
        std::vector<int> leaves;
        for (const Column& column : columns_) {
          const auto& field = reader_->manifest().schema_fields[column.header_index];
          leaves.push_back(field.column_index);
        }
        auto batches = reader_->GetRecordBatchReader(row_groups, leaves);
        if (!batches.ok()) fail_file("cannot read its row groups: " + batches.status().message());
        batches_ = std::move(*batches);
      }
      std::shared_ptr<arrow::RecordBatch> batch;
      const arrow::Status read = batches_->ReadNext(&batch);
      if (!read.ok()) {
        throw DataError(where(next_row) + ": damaged or truncated data: " + read.message());
      }
      if (!batch) {
        if (rows_before_batch_ != rows_in_file_) {
          throw DataError(where(next_row) + ": the file ends after " +
                          std::to_string(rows_before_batch_) + " of its " +
                          std::to_string(rows_in_file_) + " rows");
        }
        return false;
      }
      // Parquet checksums nothing by default, and a damaged page can decode into offsets or
      // dictionary indices that point outside their buffers: every batch is checked whole
      // before a value is read.
      const arrow::Status valid = batch->ValidateFull();
      if (!valid.ok()) {
        throw DataError(where(next_row) + ": damaged data: " + valid.message());
      }
      for (std::size_t k = 0; k < columns_.size(); ++k) {
        Column& column = columns_[k];
        column.values = batch->column(static_cast<int>(k));
        column.local.reset();
        if (column.type->id() == arrow::Type::TIMESTAMP &&
            !static_cast<const arrow::TimestampType&>(*column.type).timezone().empty()) {
          initialize_arrow_compute();
          auto local = arrow::compute::LocalTimestamp(column.values);
          if (!local.ok()) {
            fail_at(next_row, column.name,
                    "its time zone could not be applied: " + local.status().message());
          }
          column.local = local->make_array();
        }
      }
      rows_in_batch_ = batch->num_rows();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw DataError(where(next_row) + ": damaged or truncated data: " + e.what());
    }
    return true;
  }

  // Microseconds of a timestamp in `unit`; a fraction of a microsecond or an overflow is an
  // error (tftrain keeps times in microseconds).
  std::int64_t timestamp_micros(std::int64_t value, arrow::TimeUnit::type unit,
                                std::size_t position, const std::string& column) const {
    std::int64_t micros = 0;
    switch (unit) {
      case arrow::TimeUnit::SECOND:
        if (__builtin_mul_overflow(value, std::int64_t{1000000}, &micros)) {
          fail_at(position, column, "timestamp " + std::to_string(value) + " s is out of range");
        }
        return micros;
      case arrow::TimeUnit::MILLI:
        if (__builtin_mul_overflow(value, std::int64_t{1000}, &micros)) {
          fail_at(position, column, "timestamp " + std::to_string(value) + " ms is out of range");
        }
        return micros;
      case arrow::TimeUnit::MICRO: return value;
      case arrow::TimeUnit::NANO:
        if (value % 1000 != 0) {
          fail_at(position, column,
                  "timestamp " + std::to_string(value) +
                      " ns has a fraction of a microsecond, which tftrain's times (in "
                      "microseconds) would lose; round the column to microseconds");
        }
        return value / 1000;
    }
    return value;
  }

  // The cell of row `i` of `array` (of the column's type, or a dictionary's values).
  void fill(Cell& cell, const Column& column, const arrow::Array& array, const arrow::Array* local,
            std::int64_t i, std::size_t position) const {
    if (array.IsNull(i)) {
      cell.kind = Cell::Kind::Null;
      return;
    }
    auto integer = [&](std::int64_t v) {
      cell.kind = Cell::Kind::Integer;
      cell.integer = v;
    };
    auto real = [&](double v) {
      cell.kind = Cell::Kind::Real;
      cell.real = v;
    };
    auto string = [&](std::string_view v) {
      cell.kind = Cell::Kind::String;
      cell.text = v;
    };
    switch (array.type_id()) {
      case arrow::Type::INT8: return integer(static_cast<const arrow::Int8Array&>(array).Value(i));
      case arrow::Type::INT16:
        return integer(static_cast<const arrow::Int16Array&>(array).Value(i));
      case arrow::Type::INT32:
        return integer(static_cast<const arrow::Int32Array&>(array).Value(i));
      case arrow::Type::INT64:
        return integer(static_cast<const arrow::Int64Array&>(array).Value(i));
      case arrow::Type::UINT8:
        return integer(static_cast<const arrow::UInt8Array&>(array).Value(i));
      case arrow::Type::UINT16:
        return integer(static_cast<const arrow::UInt16Array&>(array).Value(i));
      case arrow::Type::UINT32:
        return integer(static_cast<const arrow::UInt32Array&>(array).Value(i));
      case arrow::Type::UINT64: {
        const std::uint64_t v = static_cast<const arrow::UInt64Array&>(array).Value(i);
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          fail_at(position, column.name, "uint64 value " + std::to_string(v) + " exceeds 2^63 - 1");
        }
        return integer(static_cast<std::int64_t>(v));
      }
      case arrow::Type::BOOL:
        return integer(static_cast<const arrow::BooleanArray&>(array).Value(i) ? 1 : 0);
      case arrow::Type::FLOAT: return real(static_cast<const arrow::FloatArray&>(array).Value(i));
      case arrow::Type::DOUBLE: return real(static_cast<const arrow::DoubleArray&>(array).Value(i));
      case arrow::Type::STRING:
        return string(static_cast<const arrow::StringArray&>(array).GetView(i));
      case arrow::Type::LARGE_STRING:
        return string(static_cast<const arrow::LargeStringArray&>(array).GetView(i));
      case arrow::Type::STRING_VIEW:
        return string(static_cast<const arrow::StringViewArray&>(array).GetView(i));
      case arrow::Type::DICTIONARY: {
        const auto& dictionary = static_cast<const arrow::DictionaryArray&>(array);
        return fill(cell, column, *dictionary.dictionary(), nullptr, dictionary.GetValueIndex(i),
                    position);
      }
      case arrow::Type::TIMESTAMP: {
        const auto unit = static_cast<const arrow::TimestampType&>(*array.type()).unit();
        const std::int64_t utc = static_cast<const arrow::TimestampArray&>(array).Value(i);
        cell.kind = Cell::Kind::Timestamp;
        cell.integer = timestamp_micros(utc, unit, position, column.name);
        cell.has_zone = local != nullptr;
        cell.local =
            local == nullptr
                ? cell.integer
                : timestamp_micros(static_cast<const arrow::TimestampArray&>(*local).Value(i), unit,
                                   position, column.name);
        return;
      }
      case arrow::Type::DATE32:
        cell.kind = Cell::Kind::Date;
        cell.integer =
            static_cast<std::int64_t>(static_cast<const arrow::Date32Array&>(array).Value(i)) *
            kMicrosPerDay;
        return;
      case arrow::Type::DATE64: {
        const std::int64_t millis = static_cast<const arrow::Date64Array&>(array).Value(i);
        if (millis % kMillisPerDay != 0) {
          fail_at(position, column.name,
                  "date64 value " + std::to_string(millis) + " ms is not a midnight");
        }
        cell.kind = Cell::Kind::Date;
        cell.integer = millis / kMillisPerDay * kMicrosPerDay;
        return;
      }
      default: fail_at(position, column.name, "unsupported type " + array.type()->ToString());
    }
  }

  std::string path_;
  std::int64_t batch_rows_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::string> header_;
  std::int64_t rows_in_file_ = 0;
  std::vector<std::int64_t> row_group_ends_;  // cumulative rows at the end of each row group
  std::vector<Column> columns_;
  std::unique_ptr<arrow::RecordBatchReader> batches_;
  std::int64_t rows_before_batch_ = 0;  // rows of the file before the current batch
  std::int64_t rows_in_batch_ = 0;
  std::int64_t row_in_batch_ = 0;
};

}  // namespace

std::unique_ptr<RowSource> open_parquet_file(const std::string& path, std::size_t batch_rows) {
  return std::make_unique<ParquetRowSource>(path, batch_rows);
}

std::string arrow_version() { return ARROW_VERSION_STRING; }

}  // namespace tft
