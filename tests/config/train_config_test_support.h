// Fixtures shared by the TrainConfig suites (test_train_config_*.cpp): a full and a minimal
// config text, and a temporary folder for config files. Include it last: it includes
// support/cmocka_cpp.h (its helpers assert).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <stdlib.h>  // mkdtemp

#include "support/cmocka_cpp.h"

namespace tft::testing {

// A full config touching every section and most keys.
inline const char* const kFull = R"(# a comment
data:
  path: data/sales.csv
  format: csv
  delimiter: ";"
  time_column: date
  time_format: iso8601
  group_columns: [store, item]
  target: sales
  static_reals: [store_size]
  static_categoricals: [store, {name: region, embedding_dim: 3}]
  known_reals: [price, relative_time_idx]
  known_categoricals: [promo, day_of_week, {name: month, embedding_dim: 4}]
  unknown_reals: [footfall]
  unknown_categoricals: [weather]
  missing_values: forward_fill
  na_values: ["", NA, "n/a"]
  scaling: global
  target_normalizer: {scope: series, center: statistic, method: robust, transformation: log1p}
windows:
  encoder_length: 30
  prediction_length: 7
  stride: 2
split:
  validation_steps: 60
model:
  hidden_size: 32
  attention_heads: 4
  dropout: 0.2
  embedding_dropout: 0.05
  lstm_layers: 2
  decoder_layers: 2
  quantiles: [0.1, 0.5, 0.9]
  unit_chunks: {lstm_encoder: 4, attention_1: 2}
training:
  epochs: 15
  batch_size: 128
  learning_rate: 0.003
  weight_decay: 0.01
  lr_warmup_steps: 200
  gradient_clip_norm: 0.5
  lr_schedule:
    kind: reduce_on_plateau
    factor: 0.3
    patience: 2
    min_lr: 1.0e-5
  early_stopping_patience: 5
  seed: 12345678901234
  threads: 2
  device: cuda:1
  distributed: {backend: gloo, timeout_seconds: 30}
  qat: {enabled: true, start_epoch: 2, weight_bits: 6, activation_bits: 7,
        freeze_observers_epoch: 4}
checkpoint:
  strategy: selective
  layers: [lstm_encoder, attention_1]
  checkpoint_ffn: false
output:
  directory: runs/sales
)";

inline const char* const kMinimal = R"(data:
  path: sales.csv
  time_column: date
  target: sales
windows:
  encoder_length: 24
  prediction_length: 6
)";

inline std::string temp_dir() {
  static std::string dir;
  if (dir.empty()) {
    char templ[] = "/tmp/tft_config_test_XXXXXX";
    const char* made = mkdtemp(templ);
    assert_non_null(made);
    dir = made;
  }
  return dir;
}

inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

// Minimal text with one line replaced or appended, for error cases.
inline std::string with_line(const std::string& extra) { return std::string(kMinimal) + extra; }

// Removes the folder temp_dir() made (at the end of a suite's main).
inline void remove_temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(temp_dir(), ec);
}

}  // namespace tft::testing
