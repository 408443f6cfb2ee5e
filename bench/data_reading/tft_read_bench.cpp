// tft-read-bench: how fast and in how much memory the data pipeline loads a file (CSV or
// Parquet): one TimeSeriesDataset::load (read, group, split, fit, windows), timed, with the
// process's peak resident set size. One file per process, so each peak is its own.
//
//   tft-read-bench CONFIG.yaml [DATA_FILE] [--memory]
//
// --memory (a Parquet DATA_FILE, in builds with Arrow): the file is first read whole into an
// in-memory Arrow table, untimed, as a host's dataframe would be; the timed part is what the C
// API's tft_data_create_from_arrow_stream and tft_trainer_create_from_data do with it: take
// the table's C stream (ArrowData::read) and build the dataset from it.
//
// Prints one JSON object: format, rows, series, seconds, file_bytes, mb_per_s (file MB per
// second), rss_before_mb, peak_rss_mb and storage_mb (the dataset's own columns and windows);
// with --memory also table_mb (the host table's buffers); there rss_before_mb is taken with the
// table in memory, and the peak is that of the timed part alone.
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/train_config_io.h"
#include "data/time_series_dataset.h"
#include "readers/arrow_data.h"
#include "readers/data_file.h"

#ifdef TFT_WITH_PARQUET
#include <arrow/c/abi.h>

#include "parquet_table_stream.h"
#endif

namespace {

// The current resident set size in MiB (/proc/self/statm's second field, in pages).
double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * 4096.0 / (1 << 20);
}

// The peak resident set size in MiB: /proc/self/status's VmHWM, which (unlike getrusage's
// ru_maxrss) starts afresh at exec, so a parent's size does not count.
double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return 0.0;
}

// Starts VmHWM afresh from the current resident set ("5" to /proc/self/clear_refs, Linux 4.0+).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace

// The dataset from an in-memory Arrow table of `config.data.path` (a Parquet file), timing
// only what the library does with the table's C stream; table_mb gets the table's size.
tft::TimeSeriesDataset load_from_memory(const tft::TrainConfig& config, double* seconds,
                                        double* table_mb, double* rss_before) {
#ifdef TFT_WITH_PARQUET
  const tft::bench::ParquetTableStream table(config.data.path);
  *table_mb = static_cast<double>(table.table_bytes()) / (1 << 20);
  ArrowArrayStream stream;
  table.export_stream(&stream);
  reset_peak_rss();  // the peak of reading the Parquet file is the host's, not ours
  *rss_before = rss_mb();
  const auto start = std::chrono::steady_clock::now();
  const auto data = tft::ArrowData::read(&stream, "arrow stream");
  tft::TimeSeriesDataset dataset =
      tft::TimeSeriesDataset::from_source(*data->rows(), config, nullptr);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return dataset;
#else
  (void)config, (void)seconds, (void)table_mb, (void)rss_before;
  throw tft::UnsupportedError("--memory needs a build with Arrow (TFT_WITH_PARQUET)");
#endif
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool memory = !args.empty() && args.back() == "--memory";
  if (memory) args.pop_back();
  if (args.empty() || args.size() > 2) {
    std::fprintf(stderr, "usage: tft-read-bench CONFIG.yaml [DATA_FILE] [--memory]\n");
    return 2;
  }
  try {
    tft::TrainConfig config = tft::load_train_config_file(args[0]);
    if (args.size() == 2) config.data.path = args[1];
    if (memory && tft::data_file_format(config.data) != tft::DataFileFormat::Parquet) {
      std::fprintf(stderr, "tft-read-bench: --memory reads a Parquet file into memory first\n");
      return 2;
    }
    double before = rss_mb();
    double seconds = 0.0, table_mb = 0.0;
    const auto start = std::chrono::steady_clock::now();
    const tft::TimeSeriesDataset dataset =
        memory ? load_from_memory(config, &seconds, &table_mb, &before)
               : tft::TimeSeriesDataset::load(config);
    if (!memory) {
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double bytes = static_cast<double>(std::filesystem::file_size(config.data.path));
    nlohmann::json out;
    out["format"] = memory ? "arrow stream (in memory)"
                    : tft::data_file_format(config.data) == tft::DataFileFormat::Parquet ? "parquet"
                                                                                         : "csv";
    if (memory) out["table_mb"] = table_mb;
    out["file"] = config.data.path;
    out["rows"] = dataset.num_rows();
    out["series"] = dataset.series().size();
    out["seconds"] = seconds;
    out["file_bytes"] = bytes;
    out["mb_per_s"] = bytes / (1 << 20) / seconds;
    out["rss_before_mb"] = before;
    out["peak_rss_mb"] = peak_rss_mb();
    out["storage_mb"] = static_cast<double>(dataset.storage_bytes()) / (1 << 20);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tft-read-bench: %s\n", e.what());
    return 1;
  }
}
