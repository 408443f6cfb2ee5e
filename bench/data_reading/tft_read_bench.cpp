// tft-read-bench: how fast and in how much memory the data pipeline loads a file (CSV or
// Parquet): one TimeSeriesDataset::load (read, group, split, fit, windows), timed, with the
// process's peak resident set size. One file per process, so each peak is its own.
//
//   tft-read-bench CONFIG.yaml [DATA_FILE]
//
// Prints one JSON object: format, rows, series, seconds, file_bytes, mb_per_s (file MB per
// second), rss_before_mb, peak_rss_mb and storage_mb (the dataset's own columns and windows).
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/train_config_io.h"
#include "data/data_file.h"
#include "data/time_series_dataset.h"

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: tft-read-bench CONFIG.yaml [DATA_FILE]\n");
    return 2;
  }
  try {
    tft::TrainConfig config = tft::load_train_config_file(argv[1]);
    if (argc == 3) config.data.path = argv[2];
    const double before = rss_mb();
    const auto start = std::chrono::steady_clock::now();
    const tft::TimeSeriesDataset dataset = tft::TimeSeriesDataset::load(config);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double bytes = static_cast<double>(std::filesystem::file_size(config.data.path));
    nlohmann::json out;
    out["format"] =
        tft::data_file_format(config.data) == tft::DataFileFormat::Parquet ? "parquet" : "csv";
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
