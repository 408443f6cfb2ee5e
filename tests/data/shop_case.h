// The shop case that write_parquet_cases.py writes into TFT_PARQUET_CASES (shop.csv,
// shop.parquet): 6 series (store x item), 40 days each, nulls in price; its config, shared by
// test_parquet.cpp and test_arrow_stream.cpp.
#pragma once

#include <filesystem>
#include <string>

#include "config/train_config.h"
#include "support/test_files.h"

namespace tft::testing {

inline std::filesystem::path parquet_cases() {
  return tft::testing::path_from_environment("TFT_PARQUET_CASES");
}

// The shop config reading `path` (empty: the data comes in memory).
inline TrainConfig shop_config(const std::string& path) {
  TrainConfig c;
  c.data.path = path;
  c.data.time_column = "day";
  c.data.group_columns = {"store", "item"};
  c.data.target = "sales";
  c.data.static_categoricals = {{"store", 0}, {"item", 0}};
  c.data.known_reals = {"price", "promo", "relative_time_idx"};
  c.data.known_categoricals = {{"day_of_week", 0}, {"month", 0}};
  c.data.missing_values = tft::MissingValuePolicy::ForwardFill;
  c.windows.encoder_length = 7;
  c.windows.prediction_length = 3;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 6;
  c.model.hidden_size = 8;
  c.model.attention_heads = 2;
  c.training.epochs = 2;
  c.training.batch_size = 16;
  c.training.seed = 3;
  c.training.threads = 1;
  c.checkpoint = tft::CheckpointConfig::uniform(1);
  return c;
}

}  // namespace tft::testing
