// Shared helpers of the training tests: a small synthetic multi-series problem written as CSV
// text, a matching config, scratch folders and bitwise comparisons.
#pragma once

#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "support/test_files.h"

#include "config/train_config.h"
#include "model/tft_model.h"
#include "report/forecast.h"
#include "store/module_state.h"

namespace tft::testing {

// Three series (a, b, c) with integer time 0 ... length-1:
//   y = level_s + 3 sin(2 pi t / 12 + phase_s) + noise (N(0, 0.2))
// with the season as known inputs (season_sin, season_cos) and a noisy copy of y's last
// value as an unknown input (lagged). A model that uses the known season learns it quickly.
// `poison_row` >= 0 sets `lagged` of series a at that row to 3e38 (finite but overflowing).
inline std::string synthetic_csv(int length = 120, int poison_row = -1) {
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> noise(0.0, 0.2);
  std::string text = "series,group,t,season_sin,season_cos,lagged,y\n";
  const char* names[] = {"a", "b", "c"};
  const double pi = 3.14159265358979323846;
  for (int s = 0; s < 3; ++s) {
    double previous = 0.0;
    for (int t = 0; t < length; ++t) {
      const double angle = 2 * pi * t / 12.0;
      const double y = 10.0 * (s + 1) + 3.0 * std::sin(angle + 0.7 * s) + noise(rng);
      char row[256];
      const double lagged = (s == 0 && t == poison_row) ? 3e38 : previous + noise(rng);
      std::snprintf(row, sizeof row, "%s,%s,%d,%.6f,%.6f,%.6g,%.6f\n", names[s],
                    s == 2 ? "odd" : "even", t, std::sin(angle), std::cos(angle), lagged, y);
      text += row;
      previous = y;
    }
  }
  return text;
}

// A tiny config over synthetic_csv() at `csv`, writing to `output`.
inline TrainConfig synthetic_config(const std::filesystem::path& csv,
                                    const std::filesystem::path& output) {
  TrainConfig c;
  c.data.path = csv.string();
  c.data.time_column = "t";
  c.data.group_columns = {"series"};
  c.data.target = "y";
  c.data.static_categoricals = {{"series", 0}, {"group", 0}};
  c.data.known_reals = {"season_sin", "season_cos", "relative_time_idx"};
  c.data.unknown_reals = {"lagged"};
  c.windows.encoder_length = 12;
  c.windows.prediction_length = 4;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 16;
  c.model.hidden_size = 8;
  c.model.attention_heads = 2;
  c.model.dropout = 0.1;
  c.training.epochs = 12;
  c.training.batch_size = 32;
  c.training.learning_rate = 0.01;
  c.training.lr_schedule.min_lr = 1e-5;
  c.training.early_stopping_patience = 0;
  c.training.seed = 7;
  c.training.threads = 1;
  c.checkpoint = CheckpointConfig::uniform(2);
  c.output.directory = output.string();
  return c;
}

inline bool same_weights(const TFTModel& a, const TFTModel& b) {
  return module_states_equal(copy_module_state(*a), copy_module_state(*b));
}

// Same forecasts, series, times and bits (values and actuals).
inline bool forecasts_bitwise_equal(const Predictions& a, const Predictions& b) {
  if (a.forecasts.size() != b.forecasts.size() || a.quantiles != b.quantiles) return false;
  for (std::size_t i = 0; i < a.forecasts.size(); ++i) {
    const Forecast& x = a.forecasts[i];
    const Forecast& y = b.forecasts[i];
    if (x.series != y.series || x.origin != y.origin || x.future != y.future ||
        x.times != y.times || x.values.size() != y.values.size() ||
        x.actuals.size() != y.actuals.size()) {
      return false;
    }
    if (std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(float)) != 0 ||
        std::memcmp(x.actuals.data(), y.actuals.data(), x.actuals.size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace tft::testing
