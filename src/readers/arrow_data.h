// Data handed over in memory as an Arrow C stream (the Arrow C Data Interface's
// ArrowArrayStream; the C API's tft_data), read once and kept: a run reads its rows as often as
// it needs (training, then forecasting), from the batches the stream gave.
//
// Reading is eager: every batch is imported when the stream is read, and the stream is then
// released; a stream that fails shows at once. The batches are not copied: each imported array
// keeps the producer's buffers alive (their release callbacks run when the last reference goes),
// so holding the data costs the producer's table, not a second copy of it.
//
// Rows are read through an Arrow stream row source (arrow_row_source.h): the same column types,
// null and NaN rules and messages as a Parquet file; row i (0-based, across batches) is
// "<name>: row i".
//
// The C interface carries no buffer sizes: lengths and offsets are the producer's word (Arrow's
// importer infers buffer sizes from them), so the validation of arrow_row_source.h catches
// what contradicts itself (a negative length, an offset going backwards), not a buffer shorter
// than its array says: as for any consumer of the interface, the producer's arrays must be well
// formed.
//
// Arrow C++ is needed (builds with TFT_WITH_PARQUET); without it read() is an UnsupportedError.
// This header includes no Arrow header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "readers/row_source.h"

// The Arrow C stream interface (Arrow's arrow/c/abi.h; tftrain.h copies its definition).
struct ArrowArrayStream;

namespace tft {

class ArrowData {
 public:
  // Takes the stream over (the spec's move: *stream is marked released, release == NULL, as
  // soon as it is taken; the library calls its release exactly once) and reads every batch.
  // Errors (DataError, the stream released): get_schema failing ("<name>: cannot read the
  // stream's schema: <its get_last_error>"), get_next failing ("<name>: row R: the stream
  // failed: <its get_last_error>", R the first row of the batch that failed), a stream of no
  // rows. InvalidArgumentError for a stream already released (release == NULL). In builds
  // without Arrow: UnsupportedError, and the stream is left untouched (the caller releases it).
  static std::shared_ptr<const ArrowData> read(ArrowArrayStream* stream, std::string name);

  ~ArrowData();
  ArrowData(const ArrowData&) = delete;
  ArrowData& operator=(const ArrowData&) = delete;

  const std::string& name() const { return name_; }
  std::int64_t num_rows() const { return num_rows_; }
  // A new source over the rows, from the first; any number may be open at once.
  std::unique_ptr<RowSource> rows() const;

 private:
  struct Batches;  // the schema and record batches (Arrow C++)
  ArrowData(std::string name, std::unique_ptr<Batches> batches, std::int64_t num_rows);

  std::string name_;
  std::unique_ptr<Batches> batches_;
  std::int64_t num_rows_ = 0;
};

// Whether this build reads Arrow streams (it has Arrow C++).
bool arrow_streams_in_build();

}  // namespace tft
