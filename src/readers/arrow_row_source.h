// Rows of Arrow record batches, typed (row_source.h's Cell): what a Parquet file
// (parquet_source.h) and an Arrow stream share, in builds with Arrow C++ (TFT_WITH_PARQUET).
//
// Only the columns the dataset builder selects are read. Column types, for every Arrow source:
//   - int8-int64, uint8-uint32: Integer; uint64 up to 2^63 - 1; boolean: Integer 0 or 1;
//   - float, double: Real (NaN is missing, as in pandas);
//   - string, large_string, string_view, and dictionaries of them or of integers: String or
//     Integer;
//   - timestamp of any unit, with or without a time zone: Timestamp, in microseconds (a value
//     with a fraction of a microsecond is an error, not rounded); a zoned timestamp's calendar
//     features use the zone's wall clock (Arrow's local_timestamp, the system's tz database);
//   - date32, date64: Date.
// Anything else (decimals, half floats, binary, nested types, times of day, durations) is a
// DataError naming the source, the column and its type. Every batch's selected columns are
// validated whole (ValidateFull) before a value is read, so offsets or dictionary indices
// that point outside their buffers are a DataError, never a read out of bounds.
//
// Rows are counted from 0 in messages, as pandas and pyarrow do: "<name>: row 11: ...";
// positions (RowSource) are the row's index + 1, 0 naming the source as a whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>

#include "readers/row_source.h"

namespace tft {

class ArrowRowSource : public RowSource {
 public:
  const std::string& name() const override { return name_; }
  const std::vector<std::string>& header() const override { return header_; }
  // DataError for a selected column of a type tftrain does not read.
  void select_columns(const std::vector<int>& columns) override;
  bool next(std::vector<Cell>& cells, std::size_t& position) override;
  std::string where(std::size_t position) const override;
  std::size_t header_position() const override { return 0; }
  std::string position_text(std::size_t position) const override;

  // One selected column and its current batch.
  struct Column {
    int header_index = 0;
    std::string name;
    std::shared_ptr<arrow::DataType> type;
    std::shared_ptr<arrow::Array> values;
    // Zoned timestamps: the same instants on the zone's wall clock (naive), for calendar
    // fields.
    std::shared_ptr<arrow::Array> local;
  };

 protected:
  // `format` names the source's types in messages ("the Parquet type ..."), `cast_hint` says
  // how to fix an unsupported one.
  ArrowRowSource(std::string name, std::string format, std::string cast_hint);
  // The columns (header) of every batch.
  void set_schema(std::shared_ptr<arrow::Schema> schema);
  const std::vector<Column>& selected() const { return columns_; }

  // The batches from the first row. projected = true: column k of a batch is selected column k
  // (a Parquet reader decodes only those); false: batches hold every column of the schema.
  virtual std::shared_ptr<arrow::RecordBatchReader> open_batches(bool& projected) = 0;
  // Throws the DataError for a batch that could not be read, the first of its rows at
  // `position`; `message` is the reader's.
  [[noreturn]] virtual void batch_failed(std::size_t position,
                                         const std::string& message) const = 0;
  // After the last batch, `rows` rows read (`position` is the row after them).
  virtual void batches_ended(std::size_t /*position*/, std::int64_t /*rows*/) const {}

  [[noreturn]] void fail_at(std::size_t position, const std::string& column,
                            const std::string& what) const;

 private:
  bool read_batch();
  std::int64_t timestamp_micros(std::int64_t value, int unit, std::size_t position,
                                const std::string& column) const;
  void fill(Cell& cell, const Column& column, const arrow::Array& array, const arrow::Array* local,
            std::int64_t i, std::size_t position) const;

  std::string name_;
  std::string format_;
  std::string cast_hint_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::string> header_;
  std::vector<Column> columns_;
  std::shared_ptr<arrow::RecordBatchReader> batches_;
  bool projected_ = false;
  std::int64_t rows_before_batch_ = 0;  // rows before the current batch
  std::int64_t rows_in_batch_ = 0;
  std::int64_t row_in_batch_ = 0;
};

// The rows of any record batch reader, read once, batch by batch; `name` leads messages
// ("arrow stream: row 11: column 'y': ..."). A batch the reader fails to give is a DataError
// "<name>: row R: the stream failed: <the reader's message>" (for a C stream, its
// get_last_error text). `row_capacity` is the rows expected, when known (0: unknown).
std::unique_ptr<RowSource> open_arrow_stream(std::shared_ptr<arrow::RecordBatchReader> batches,
                                             std::string name, std::size_t row_capacity = 0);

// The DataError open_arrow_stream's source throws when a batch fails, the first of its rows
// being row `row` (0-based) of the stream.
[[noreturn]] void throw_stream_failed(const std::string& name, std::int64_t row,
                                      const std::string& message);

}  // namespace tft
