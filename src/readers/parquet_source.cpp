#include "readers/parquet_source.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <vector>

#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/config.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "common/error.h"
#include "readers/arrow_row_source.h"

namespace tft {

namespace {

class ParquetRowSource final : public ArrowRowSource {
 public:
  ParquetRowSource(std::string path, std::size_t batch_rows)
      : ArrowRowSource(path, "Parquet", "cast it when writing the file"),
        path_(std::move(path)),
        batch_rows_(static_cast<std::int64_t>(batch_rows)) {
    open();
  }

  std::size_t row_capacity() const override { return static_cast<std::size_t>(rows_in_file_); }

  std::string where(std::size_t position) const override {
    if (position == 0) return path_;
    return ArrowRowSource::where(position) + " (row group " +
           std::to_string(row_group_of(position - 1)) + ")";
  }

 private:
  [[noreturn]] void fail_file(const std::string& what) const {
    throw DataError(path_ + ": " + what);
  }

  void open() {
    {
      std::ifstream probe(path_, std::ios::binary);
      if (!probe) {
        throw IoError("cannot open '" + path_ + "': " + std::strerror(errno));
      }
    }
    std::shared_ptr<arrow::Schema> schema;
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
      const arrow::Status read = reader_->GetSchema(&schema);
      if (!read.ok()) fail_file("unreadable schema: " + read.message());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      // ParquetException, and what a damaged footer makes the Thrift decoder throw
      // (std::length_error, std::bad_alloc for an absurd length).
      fail_file(std::string("not a readable Parquet file: ") + e.what());
    }
    set_schema(std::move(schema));
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

  // Every row group, only the selected columns' leaves decoded.
  std::shared_ptr<arrow::RecordBatchReader> open_batches(bool& projected) override {
    std::vector<int> row_groups(row_group_ends_.size());
    for (std::size_t g = 0; g < row_groups.size(); ++g) row_groups[g] = static_cast<int>(g);
    std::vector<int> leaves;
    for (const Column& column : selected()) {
      const auto& field = reader_->manifest().schema_fields[column.header_index];
      leaves.push_back(field.column_index);
    }
    auto batches = reader_->GetRecordBatchReader(row_groups, leaves);
    if (!batches.ok()) fail_file("cannot read its row groups: " + batches.status().message());
    projected = true;
    return std::move(*batches);
  }

  [[noreturn]] void batch_failed(std::size_t position, const std::string& message) const override {
    throw DataError(where(position) + ": damaged or truncated data: " + message);
  }

  void batches_ended(std::size_t position, std::int64_t rows) const override {
    if (rows != rows_in_file_) {
      throw DataError(where(position) + ": the file ends after " + std::to_string(rows) +
                      " of its " + std::to_string(rows_in_file_) + " rows");
    }
  }

  std::string path_;
  std::int64_t batch_rows_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::int64_t rows_in_file_ = 0;
  std::vector<std::int64_t> row_group_ends_;  // cumulative rows at the end of each row group
};

}  // namespace

std::unique_ptr<RowSource> open_parquet_file(const std::string& path, std::size_t batch_rows) {
  return std::make_unique<ParquetRowSource>(path, batch_rows);
}

std::string arrow_version() { return ARROW_VERSION_STRING; }

}  // namespace tft
