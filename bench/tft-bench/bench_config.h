// tft-bench's input: a model and a synthetic batch shape (bench/configs/*.yaml).
#pragma once

#include "model/model_config.h"
#include "nn/precision.h"

#include <cstdint>
#include <string>

namespace tft::bench {

struct BenchConfig {
  ModelConfig model;  // schema of synthetic variables (s_real0, s_cat0, known0, ...)
  std::int64_t batch_size = 64;
  // training.precision, as in a training YAML (tft-bench's --precision overrides it).
  Precision precision = Precision::Float32;
};

// Reads and validates a bench YAML file; ConfigError naming file, line and key otherwise.
BenchConfig load_bench_config(const std::string& path);

}  // namespace tft::bench
