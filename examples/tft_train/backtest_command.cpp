#include "backtest_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "common/error.h"
#include "config/train_config_io.h"
#include "train/backtest.h"

namespace tft_train {

CLI::App* add_backtest_command(CLI::App& app, BacktestOptions& o) {
  CLI::App* backtest = app.add_subcommand(
      "backtest",
      "Rolling-origin backtest: trains before each of the last K horizons of every series and "
      "scores the forecasts of the rows after it (docs/backtest.md).");
  backtest->add_option("--config", o.config, "training config (YAML, see docs/config.md)")
      ->required()
      ->type_name("FILE");
  o.folds = backtest->add_option("--folds", o.folds_value, "backtest.folds (default 5)")
                ->check(CLI::Range(1, 1000))
                ->type_name("K");
  o.mode = backtest
               ->add_option("--mode", o.mode_value,
                            "backtest.mode: scratch (every fold from fresh weights) or refit "
                            "(each fold refits the fold before's model)")
               ->check(CLI::IsMember({"scratch", "refit"}))
               ->type_name("MODE");
  o.refit_epochs = backtest
                       ->add_option("--refit-epochs", o.refit_epochs_value,
                                    "backtest.refit_epochs (0: training.epochs)")
                       ->check(CLI::Range(0, 100000))
                       ->type_name("N");
  o.output = backtest
                 ->add_option("--output", o.output_value,
                              "where the backtest writes (default: output.directory/backtest)")
                 ->type_name("DIR");
  o.threads = backtest->add_option("--threads", o.threads_value, "training.threads")
                  ->check(CLI::Range(0, 4096))
                  ->type_name("N");
  o.seed = backtest->add_option("--seed", o.seed_value, "training.seed")->type_name("N");
  backtest->add_option("--set", o.settings, "override a dotted config key (repeatable)")
      ->type_name("KEY=VALUE");
  return backtest;
}

tft::TrainConfig backtest_config(const BacktestOptions& o) {
  tft::TrainConfig config = tft::load_train_config_file(o.config);
  for (const std::string& setting : o.settings) {
    const std::size_t equals = setting.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw tft::ConfigError("--set " + setting + ": expected KEY=VALUE");
    }
    try {
      tft::set_config_value(config, setting.substr(0, equals), setting.substr(equals + 1));
    } catch (const tft::ConfigError& e) {
      throw tft::ConfigError("--set " + setting + ": " + e.what());
    }
  }
  if (o.folds->count() > 0) config.backtest.folds = o.folds_value;
  if (o.mode->count() > 0) {
    config.backtest.mode =
        o.mode_value == "refit" ? tft::BacktestMode::Refit : tft::BacktestMode::Scratch;
  }
  if (o.refit_epochs->count() > 0) config.backtest.refit_epochs = o.refit_epochs_value;
  // Without --output, beside the config's own run rather than among its files.
  config.output.directory =
      o.output->count() > 0
          ? std::filesystem::absolute(o.output_value).lexically_normal().string()
          : (std::filesystem::path(config.output.directory) / "backtest").string();
  if (o.threads->count() > 0) config.training.threads = o.threads_value;
  if (o.seed->count() > 0) config.training.seed = o.seed_value;
  config.validate();
  return config;
}

void run_backtest_command(const tft::TrainConfig& config, tft::ProgressPrinter& printer,
                          const std::function<bool()>& interrupted) {
  std::int64_t current = 0;
  const tft::BacktestReport report = tft::run_backtest(
      config, [&](std::int64_t fold, std::int64_t folds, const tft::TrainProgress& p) {
        if (fold != current) {
          current = fold;
          printer.end_line();
          std::fprintf(stderr, "tft-train backtest: fold %lld of %lld (%s)\n",
                       static_cast<long long>(fold), static_cast<long long>(folds),
                       fold > 1 && config.backtest.mode == tft::BacktestMode::Refit
                           ? "refit from the fold before"
                           : "from fresh weights");
        }
        return printer(p) && !interrupted();
      });
  std::cout << tft::backtest_summary_text(report) << std::flush;
}

}  // namespace tft_train
