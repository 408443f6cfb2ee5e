#include "parquet_table_stream.h"

#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <parquet/arrow/reader.h>

#include "common/error.h"

namespace tft::bench {
namespace {

void check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw Error(what + ": " + status.ToString());
}

template <typename T>
T value_of(arrow::Result<T> result, const std::string& what) {
  check(result.status(), what);
  return std::move(*result);
}

}  // namespace

struct ParquetTableStream::Table {
  std::shared_ptr<arrow::Table> table;
};

ParquetTableStream::ParquetTableStream(const std::string& path)
    : table_(std::make_unique<Table>()) {
  const auto file = value_of(arrow::io::ReadableFile::Open(path), path);
  auto reader = value_of(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path);
  table_->table = value_of(reader->ReadTable(), path);
}

ParquetTableStream::~ParquetTableStream() = default;

std::int64_t ParquetTableStream::table_bytes() const {
  return value_of(arrow::util::ReferencedBufferSize(*table_->table), "table size");
}

void ParquetTableStream::export_stream(ArrowArrayStream* out) const {
  auto batches = std::make_shared<arrow::TableBatchReader>(table_->table);
  check(arrow::ExportRecordBatchReader(batches, out), "exporting the table");
}

}  // namespace tft::bench
