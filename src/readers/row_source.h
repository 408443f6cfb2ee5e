// Where the dataset builder (row_reader.h) gets its rows: a CSV file, whose fields
// are text that the builder parses, or a Parquet file (parquet_source.h), whose values arrive
// typed: numbers, integers, timestamps, dates and strings, never turned into text on the way.
// One row at a time, in file order, with one Cell per column of the header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readers/csv_reader.h"

namespace tft {

// One value of a row, as its file holds it. Views stay valid until the source's next row.
struct Cell {
  enum class Kind {
    Text,       // a CSV field: `text`, parsed as the column's role needs; data.na_values
                // says which texts are missing
    String,     // a Parquet string or dictionary value: `text`, a value whatever it says
    Null,       // a Parquet null
    Real,       // a Parquet float or double: `real` (NaN is missing, as in pandas)
    Integer,    // a Parquet integer: `integer`
    Timestamp,  // a Parquet timestamp: `integer` microseconds since the epoch (UTC), and
                // `local` the same instant on the wall clock of the column's time zone
    Date,       // a Parquet date: `integer` microseconds since the epoch of its midnight (UTC)
  };
  Kind kind = Kind::Text;
  std::string_view text;
  double real = 0.0;
  std::int64_t integer = 0;
  std::int64_t local = 0;
  bool has_zone = false;  // Timestamp: the column has a time zone
};

class RowSource {
 public:
  virtual ~RowSource() = default;

  // The file as given, for messages.
  virtual const std::string& name() const = 0;
  // Column names in file order.
  virtual const std::vector<std::string>& header() const = 0;
  // The columns the builder reads (indices into header()); a source may skip reading the
  // others (their cells are then unspecified). Call before the first next().
  virtual void select_columns(const std::vector<int>& columns) = 0;
  // An upper bound of the number of rows, for reserving storage.
  virtual std::size_t row_capacity() const = 0;
  // The next row: one cell per header column; `position` identifies it in messages. False at
  // the end.
  virtual bool next(std::vector<Cell>& cells, std::size_t& position) = 0;

  // Where a row is, leading a message: "data.csv:12" for a CSV line, "data.parquet: row 11
  // (row group 2)" for a Parquet row (rows counted from 0, as pandas and pyarrow do).
  // header_position() is the file as a whole ("data.csv:1", "data.parquet").
  virtual std::string where(std::size_t position) const = 0;
  virtual std::size_t header_position() const = 0;
  // A row inside a message: "line 12", "row 11".
  virtual std::string position_text(std::size_t position) const = 0;
};

// A CSV file's records as Text cells; positions are 1-based line numbers.
class CsvRowSource final : public RowSource {
 public:
  explicit CsvRowSource(CsvReader reader) : reader_(std::move(reader)) {}

  const std::string& name() const override { return reader_.name(); }
  const std::vector<std::string>& header() const override { return reader_.header(); }
  void select_columns(const std::vector<int>&) override {}  // a CSV line is split whole
  std::size_t row_capacity() const override { return reader_.count_lines(); }
  bool next(std::vector<Cell>& cells, std::size_t& position) override;
  std::string where(std::size_t position) const override {
    return reader_.name() + ":" + std::to_string(position);
  }
  std::size_t header_position() const override { return 1; }
  std::string position_text(std::size_t position) const override {
    return "line " + std::to_string(position);
  }

 private:
  CsvReader reader_;
  std::vector<std::string_view> fields_;
};

}  // namespace tft
