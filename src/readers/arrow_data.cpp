#include "readers/arrow_data.h"

#include <utility>
#include <vector>

#include "common/error.h"

#ifdef TFT_WITH_PARQUET
#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "readers/arrow_row_source.h"
#endif

namespace tft {

#ifdef TFT_WITH_PARQUET

struct ArrowData::Batches {
  std::shared_ptr<arrow::Schema> schema;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

std::shared_ptr<const ArrowData> ArrowData::read(ArrowArrayStream* stream, std::string name) {
  if (stream == nullptr) throw InvalidArgumentError(name + ": the stream is NULL");
  if (stream->release == nullptr) {
    throw InvalidArgumentError(name +
                               ": the stream is released already (its release is NULL): a "
                               "stream can be handed over once");
  }
  // Importing moves the stream into the reader (*stream is marked released at once), which
  // releases it when it goes, at the end of this function whatever happens.
  auto imported = arrow::ImportRecordBatchReader(stream);
  if (!imported.ok()) {
    throw DataError(name + ": cannot read the stream's schema: " + imported.status().message());
  }
  const std::shared_ptr<arrow::RecordBatchReader> reader = std::move(*imported);
  auto batches = std::make_unique<Batches>();
  batches->schema = reader->schema();
  std::int64_t rows = 0;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    const arrow::Status read = reader->ReadNext(&batch);
    if (!read.ok()) throw_stream_failed(name, rows, read.message());
    if (!batch) break;
    // Lengths are the producer's word (the C interface carries no buffer sizes), but a negative
    // one, columns of another length than their batch, or a total past int64 are not arrays.
    const arrow::Status shape = batch->num_rows() < 0
                                    ? arrow::Status::Invalid("a length of ", batch->num_rows())
                                    : batch->Validate();
    if (!shape.ok()) {
      throw DataError(name + ": row " + std::to_string(rows) +
                      ": the stream gave a malformed record batch: " + shape.message());
    }
    if (batch->num_rows() == 0) continue;
    if (__builtin_add_overflow(rows, batch->num_rows(), &rows)) {
      throw DataError(name + ": the stream holds more than 2^63 rows");
    }
    batches->batches.push_back(std::move(batch));
  }
  if (rows == 0) {
    throw DataError(name + ": the stream holds no rows (a schema of " +
                    std::to_string(batches->schema->num_fields()) +
                    " columns and no record batch with a row)");
  }
  return std::shared_ptr<const ArrowData>(new ArrowData(std::move(name), std::move(batches), rows));
}

std::unique_ptr<RowSource> ArrowData::rows() const {
  auto reader = arrow::RecordBatchReader::Make(batches_->batches, batches_->schema);
  if (!reader.ok()) throw DataError(name_ + ": " + reader.status().message());
  return open_arrow_stream(std::move(*reader), name_, static_cast<std::size_t>(num_rows_));
}

bool arrow_streams_in_build() { return true; }

#else

struct ArrowData::Batches {};

std::shared_ptr<const ArrowData> ArrowData::read(ArrowArrayStream*, std::string name) {
  throw UnsupportedError(name +
                         ": this build of tftrain was built without Arrow, so it reads no Arrow "
                         "streams: configure it with pyarrow installed (-DTFT_WITH_PARQUET=ON; "
                         "README, Set-up)");
}

std::unique_ptr<RowSource> ArrowData::rows() const {
  throw UnsupportedError(name_ + ": this build of tftrain was built without Arrow");
}

bool arrow_streams_in_build() { return false; }

#endif

ArrowData::ArrowData(std::string name, std::unique_ptr<Batches> batches, std::int64_t num_rows)
    : name_(std::move(name)), batches_(std::move(batches)), num_rows_(num_rows) {}

ArrowData::~ArrowData() = default;

}  // namespace tft
