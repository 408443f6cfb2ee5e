#include "readers/arrow_row_source.h"

#include <exception>
#include <limits>
#include <mutex>

#include <arrow/array.h>
#include <arrow/compute/api_scalar.h>
#include <arrow/compute/initialize.h>
#include <arrow/type.h>

#include "common/error.h"
#include "readers/iso8601.h"

namespace tft {

namespace {

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

// A stream's rows: batches as the reader gives them, every column of the schema in each.
class StreamRowSource final : public ArrowRowSource {
 public:
  StreamRowSource(std::shared_ptr<arrow::RecordBatchReader> batches, std::string name,
                  std::size_t row_capacity)
      : ArrowRowSource(std::move(name), "Arrow", "cast it before handing the data over"),
        reader_(std::move(batches)),
        row_capacity_(row_capacity) {
    set_schema(reader_->schema());
  }

  std::size_t row_capacity() const override { return row_capacity_; }

 private:
  std::shared_ptr<arrow::RecordBatchReader> open_batches(bool& projected) override {
    if (!reader_) throw DataError(name() + ": the stream was read already");
    projected = false;
    return std::move(reader_);
  }
  [[noreturn]] void batch_failed(std::size_t position, const std::string& message) const override {
    throw_stream_failed(name(), static_cast<std::int64_t>(position) - 1, message);
  }

  std::shared_ptr<arrow::RecordBatchReader> reader_;
  std::size_t row_capacity_;
};

}  // namespace

ArrowRowSource::ArrowRowSource(std::string name, std::string format, std::string cast_hint)
    : name_(std::move(name)), format_(std::move(format)), cast_hint_(std::move(cast_hint)) {}

void ArrowRowSource::set_schema(std::shared_ptr<arrow::Schema> schema) {
  schema_ = std::move(schema);
  header_.clear();
  for (const auto& field : schema_->fields()) header_.push_back(field->name());
}

void ArrowRowSource::select_columns(const std::vector<int>& columns) {
  columns_.clear();
  for (const int index : columns) {
    const std::shared_ptr<arrow::Field>& field = schema_->field(index);
    if (!is_supported(*field->type())) {
      throw DataError(name_ + ": column '" + field->name() + "': the " + format_ + " type " +
                      field->type()->ToString() +
                      " is not supported (integers, booleans, floats, doubles, strings, "
                      "dictionaries of them, dates and timestamps are); " +
                      cast_hint_);
    }
    Column column;
    column.header_index = index;
    column.name = field->name();
    column.type = field->type();
    columns_.push_back(std::move(column));
  }
  batches_.reset();
}

bool ArrowRowSource::next(std::vector<Cell>& cells, std::size_t& position) {
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

std::string ArrowRowSource::where(std::size_t position) const {
  if (position == 0) return name_;
  return name_ + ": " + position_text(position);
}

std::string ArrowRowSource::position_text(std::size_t position) const {
  return "row " + std::to_string(position - 1);
}

void ArrowRowSource::fail_at(std::size_t position, const std::string& column,
                             const std::string& what) const {
  throw DataError(where(position) + ": column '" + column + "': " + what);
}

// The next record batch of the selected columns; false at the end.
bool ArrowRowSource::read_batch() {
  rows_before_batch_ += rows_in_batch_;
  rows_in_batch_ = 0;
  row_in_batch_ = 0;
  const std::size_t next_row = static_cast<std::size_t>(rows_before_batch_) + 1;
  try {
    if (!batches_) batches_ = open_batches(projected_);
    std::shared_ptr<arrow::RecordBatch> batch;
    const arrow::Status read = batches_->ReadNext(&batch);
    if (!read.ok()) batch_failed(next_row, read.message());
    if (!batch) {
      batches_ended(next_row, rows_before_batch_);
      return false;
    }
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      Column& column = columns_[k];
      column.values = batch->column(projected_ ? static_cast<int>(k) : column.header_index);
      // Offsets or dictionary indices that point outside their buffers (a damaged Parquet
      // page, a wrong C array) are found here, before a value is read.
      const arrow::Status valid = column.values->ValidateFull();
      if (!valid.ok()) fail_at(next_row, column.name, "damaged data: " + valid.message());
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
    batch_failed(next_row, e.what());
  }
  return true;
}

// Microseconds of a timestamp in `unit`; a fraction of a microsecond or an overflow is an
// error (tftrain keeps times in microseconds).
std::int64_t ArrowRowSource::timestamp_micros(std::int64_t value, int unit, std::size_t position,
                                              const std::string& column) const {
  std::int64_t micros = 0;
  switch (static_cast<arrow::TimeUnit::type>(unit)) {
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
void ArrowRowSource::fill(Cell& cell, const Column& column, const arrow::Array& array,
                          const arrow::Array* local, std::int64_t i, std::size_t position) const {
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
  // Days since the epoch, kept in microseconds: past about 292,000 years they overflow, an
  // error as for timestamps (`shown` is the value as the column holds it).
  auto date = [&](std::int64_t days, const std::string& shown) {
    cell.kind = Cell::Kind::Date;
    if (__builtin_mul_overflow(days, kMicrosPerDay, &cell.integer)) {
      fail_at(position, column.name, shown + " is out of range");
    }
  };
  auto string = [&](std::string_view v) {
    cell.kind = Cell::Kind::String;
    cell.text = v;
  };
  switch (array.type_id()) {
    case arrow::Type::INT8: return integer(static_cast<const arrow::Int8Array&>(array).Value(i));
    case arrow::Type::INT16: return integer(static_cast<const arrow::Int16Array&>(array).Value(i));
    case arrow::Type::INT32: return integer(static_cast<const arrow::Int32Array&>(array).Value(i));
    case arrow::Type::INT64: return integer(static_cast<const arrow::Int64Array&>(array).Value(i));
    case arrow::Type::UINT8: return integer(static_cast<const arrow::UInt8Array&>(array).Value(i));
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
    case arrow::Type::DATE32: {
      const std::int64_t days = static_cast<const arrow::Date32Array&>(array).Value(i);
      date(days, "date32 value " + std::to_string(days) + " days");
      return;
    }
    case arrow::Type::DATE64: {
      const std::int64_t millis = static_cast<const arrow::Date64Array&>(array).Value(i);
      if (millis % kMillisPerDay != 0) {
        fail_at(position, column.name,
                "date64 value " + std::to_string(millis) + " ms is not a midnight");
      }
      date(millis / kMillisPerDay, "date64 value " + std::to_string(millis) + " ms");
      return;
    }
    default: fail_at(position, column.name, "unsupported type " + array.type()->ToString());
  }
}

std::unique_ptr<RowSource> open_arrow_stream(std::shared_ptr<arrow::RecordBatchReader> batches,
                                             std::string name, std::size_t row_capacity) {
  return std::make_unique<StreamRowSource>(std::move(batches), std::move(name), row_capacity);
}

void throw_stream_failed(const std::string& name, std::int64_t row, const std::string& message) {
  throw DataError(name + ": row " + std::to_string(row) + ": the stream failed: " +
                  (message.empty() ? std::string("(no message)") : message));
}

}  // namespace tft
