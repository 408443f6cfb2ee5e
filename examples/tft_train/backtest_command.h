// tft-train backtest: a rolling-origin backtest of a training config (train/backtest.h,
// docs/backtest.md).
//
//   tft-train backtest --config FILE [--folds K] [--mode scratch|refit] [--refit-epochs N]
//                      [--output DIR] [--threads N] [--seed N] [--set KEY=VALUE ...]
//
// The flags set the config's backtest.* and training keys; without --output the backtest writes
// into output.directory/backtest, beside the config's own run rather than among its files. Progress
// goes to stderr as in training, with a line as each fold starts; the summary (a line per fold and
// the overall q-risk and coverage against the naive and seasonal-naive forecasts) to stdout. Ctrl-C
// stops at the next step; the finished folds stay in backtest.csv, backtest.json and backtest.svg.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "config/train_config.h"
#include "progress_printer.h"

namespace tft_train {

struct BacktestOptions {
  std::string config;
  std::vector<std::string> settings;  // --set KEY=VALUE, then the flags below
  CLI::Option* folds = nullptr;
  CLI::Option* mode = nullptr;
  CLI::Option* refit_epochs = nullptr;
  CLI::Option* output = nullptr;
  CLI::Option* threads = nullptr;
  CLI::Option* seed = nullptr;
  std::int64_t folds_value = 0;
  std::string mode_value;
  std::int64_t refit_epochs_value = 0;
  std::string output_value;
  std::int64_t threads_value = 0;
  std::uint64_t seed_value = 0;
};

// Adds the `backtest` subcommand to `app`; its options land in `options`.
CLI::App* add_backtest_command(CLI::App& app, BacktestOptions& options);

// The config the options describe (ConfigError naming the --set or flag at fault).
tft::TrainConfig backtest_config(const BacktestOptions& options);

// Runs the backtest, printing progress through `printer`; `interrupted` is asked at every step
// (true: cancel). Throws tft::Error on failure, CancelledError when interrupted.
void run_backtest_command(const tft::TrainConfig& config, tft::ProgressPrinter& printer,
                          const std::function<bool()>& interrupted);

}  // namespace tft_train
