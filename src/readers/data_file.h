// Opens the data file a configuration names as a RowSource (row_source.h): CSV (csv_reader.h)
// or Parquet (parquet_source.h, in builds with TFT_WITH_PARQUET).
#pragma once

#include <memory>
#include <string>

#include "config/train_config.h"
#include "readers/row_source.h"

namespace tft {

enum class DataFileFormat { Csv, Parquet };

// data.format when it is csv or parquet; for auto, the extension decides: .parquet and .pq
// (in any case) are Parquet, anything else CSV.
DataFileFormat data_file_format(const DataConfig& data);

// Whether this build reads Parquet, and with which Arrow C++ version ("" when it does not).
bool parquet_in_build();
std::string arrow_version_in_build();

// ConfigError "data.path: required ..." when data.path is empty. IoError when the file cannot be
// read; DataError when it is not what its format says (a Parquet file's schema and footer are read
// here, a CSV's header). A Parquet file in a build without Parquet is an UnsupportedError.
std::unique_ptr<RowSource> open_data_file(const DataConfig& data);

}  // namespace tft
