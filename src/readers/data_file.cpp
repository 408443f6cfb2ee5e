#include "readers/data_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/error.h"
#include "readers/csv_reader.h"
#ifdef TFT_WITH_PARQUET
#include "readers/parquet_source.h"
#endif

namespace tft {

DataFileFormat data_file_format(const DataConfig& data) {
  if (data.format == "csv") return DataFileFormat::Csv;
  if (data.format == "parquet") return DataFileFormat::Parquet;
  std::string extension = std::filesystem::path(data.path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".parquet" || extension == ".pq" ? DataFileFormat::Parquet
                                                       : DataFileFormat::Csv;
}

bool parquet_in_build() {
#ifdef TFT_WITH_PARQUET
  return true;
#else
  return false;
#endif
}

std::string arrow_version_in_build() {
#ifdef TFT_WITH_PARQUET
  return arrow_version();
#else
  return "";
#endif
}

std::unique_ptr<RowSource> open_data_file(const DataConfig& data) {
  if (data.path.empty()) {
    throw ConfigError(
        "data.path: required to read the data from a file (the CSV or Parquet file); data "
        "handed over in memory (an Arrow stream) needs none");
  }
  if (data_file_format(data) == DataFileFormat::Csv) {
    return std::make_unique<CsvRowSource>(CsvReader::open(data.path, data.delimiter));
  }
#ifdef TFT_WITH_PARQUET
  return open_parquet_file(data.path);
#else
  throw UnsupportedError("'" + data.path +
                         "' is Parquet (data.format or its extension), and this build of "
                         "tftrain reads no Parquet: configure it with pyarrow installed "
                         "(-DTFT_WITH_PARQUET=ON; README, Set-up)");
#endif
}

}  // namespace tft
