// Fixtures shared by the dataset and batch tests (test_dataset_*.cpp, test_batch.cpp): small
// CSV texts loaded through TimeSeriesDataset::from_reader, and a check of loading errors.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "common/error.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/csv_reader.h"

#include "support/cmocka_cpp.h"

namespace tft_test {

// Integer time `t`, target `y`, series by `g`; encoder 3, decoder 2, no validation.
inline tft::TrainConfig base_config() {
  tft::TrainConfig c;
  c.data.path = "data.csv";
  c.data.time_column = "t";
  c.data.target = "y";
  c.data.group_columns = {"g"};
  c.windows.encoder_length = 3;
  c.windows.prediction_length = 2;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 0;
  return c;
}

// `text` as the CSV file config.data.path (the name messages give).
inline tft::TimeSeriesDataset load(const std::string& text, const tft::TrainConfig& config,
                                   const tft::DataTransforms* fitted = nullptr) {
  return tft::TimeSeriesDataset::from_reader(
      tft::CsvReader(config.data.path, text, config.data.delimiter), config, fitted);
}

// Series `name` with rows t = 0..n-1 and y = f(t).
inline std::string series_rows(const std::string& name, int n,
                               const std::function<double(int)>& f) {
  std::string out;
  char buf[128];
  for (int t = 0; t < n; ++t) {
    std::snprintf(buf, sizeof buf, "%s,%d,%.6g\n", name.c_str(), t, f(t));
    out += buf;
  }
  return out;
}

inline std::string two_series() {
  return "g,t,y\n" + series_rows("A", 6, [](int t) { return t; }) +
         series_rows("B", 6, [](int t) { return 10 * t; });
}

inline void expect_data_error(const std::string& text, const tft::TrainConfig& config,
                              const char* message) {
  TFT_ASSERT_THROWS_WITH(load(text, config), tft::DataError, message);
}

}  // namespace tft_test
