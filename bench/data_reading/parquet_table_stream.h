// For tft-read-bench --memory: a Parquet file read whole into an in-memory Arrow table (the
// host's table, made before the timed part starts) and handed out as an Arrow C stream over
// that table's record batches, as a host holding a dataframe would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

struct ArrowArrayStream;

namespace tft::bench {

class ParquetTableStream {
 public:
  // Reads every column of `path` into memory. Throws tft::Error on failure.
  explicit ParquetTableStream(const std::string& path);
  ~ParquetTableStream();
  ParquetTableStream(const ParquetTableStream&) = delete;
  ParquetTableStream& operator=(const ParquetTableStream&) = delete;

  // The table's bytes in memory (its buffers).
  std::int64_t table_bytes() const;
  // A new C stream over the table's batches into *out; the table stays this object's, and
  // the batches share its buffers.
  void export_stream(ArrowArrayStream* out) const;

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

}  // namespace tft::bench
