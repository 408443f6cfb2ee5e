// tft-train: trains a Temporal Fusion Transformer from a YAML config (docs/config.md) and
// writes the model, forecasts, interpretation and summary to the config's output folder.
//
//   tft-train --config examples/configs/sp500.yaml [--data FILE | --parquet-file FILE]
//             [--epochs N]
//             [--output DIR] [--use-gradient-checkpointing | --no-gradient-checkpointing]
//             [--memory-budget SIZE|auto]
//             [--use-qat] [--set KEY=VALUE]... [--resume] [--threads N] [--seed N] [--device
//             cpu|cuda|cuda:N] [--precision 32|bf16-mixed|16-mixed] [--nproc N]
//   tft-train predict --model DIR [--data FILE] [--output DIR]     (predict_command.h)
//
// Data parallelism (docs/distributed.md): started by torchrun (or any launcher that sets RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT) it trains as one rank of the job; --nproc N starts N
// local ranks itself. Only rank 0 prints progress and the summary and writes files.
//
// Flags override the YAML; relative --data / --output paths are taken from the current folder.
// --set overrides any dotted key of docs/config.md ("training.qat.start_epoch=3",
// "checkpoint={strategy: uniform, interval: 2}"), in order, before the other flags.
// --data keeps data.format (auto: the extension decides); --parquet-file, the seed's flag, is
// --data with data.format parquet.
// --use-gradient-checkpointing checkpoints every unit unless the YAML already chose a
// strategy or a memory budget. --memory-budget is checkpoint.memory_budget ("3.5GiB", "900MiB",
// bytes, or auto on CUDA): the planner fits the step to it, in place of the checkpoint section
// the YAML or --set gave. --use-qat turns training.qat on
// (with the YAML's other qat settings), and works together with checkpointing. Progress goes to
// stderr (a bar on a terminal, one line per epoch otherwise), the summary to stdout. Exit
// status: 0 done, 1 error, 2 bad command line or a memory budget that no checkpoint plan fits
// (said before training starts, nothing written), 130 interrupted (Ctrl-C stops at the next
// step; the last epoch's snapshot stays, --resume continues).
// Every failure prints one line: "tft-train: <reason>".
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/error.h"
#include "common/torch_errors.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "local_launcher.h"
#include "backtest_command.h"
#include "predict_command.h"
#include "progress_printer.h"
#include "report/summary.h"
#include "train/trainer.h"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// The message on one line: line breaks become "; ".
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "; ";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

int fail(int code, const std::string& message, tft::ProgressPrinter* printer = nullptr) {
  std::fflush(stdout);
  if (printer != nullptr) printer->end_line();
  std::fprintf(stderr, "tft-train: %s\n", one_line(message).c_str());
  return code;
}

std::string absolute(const std::string& path) {
  return std::filesystem::absolute(std::filesystem::path(path)).lexically_normal().string();
}

// "--epochs: expected an integer >= 1, got \"ten\"" instead of CLI11's range text.
template <typename Integer>
CLI::Validator integer_at_least(Integer minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        Integer value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end || value < minimum) {
          return "expected an integer >= " + std::to_string(minimum) + ", got \"" + text + "\"";
        }
        return std::string();
      },
      "INT>=" + std::to_string(minimum));
}

struct Options {
  std::string config;
  std::string data;
  std::string parquet_file;
  std::string output;
  std::string device;
  std::string precision;
  std::string memory_budget;
  std::string init_from;
  std::int64_t epochs = 0;
  std::int64_t threads = 0;
  std::uint64_t seed = 0;
  bool use_checkpointing = false;
  bool no_checkpointing = false;
  bool use_qat = false;
  std::vector<std::string> settings;  // --set KEY=VALUE
  bool resume = false;
  int nproc = 1;
};

// argv without --nproc and its value ("--nproc N" or "--nproc=N").
std::vector<std::string> without_nproc(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nproc") {
      ++i;
      continue;
    }
    if (arg.rfind("--nproc=", 0) == 0) continue;
    out.push_back(arg);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Trains a Temporal Fusion Transformer (LibTorch, gradient checkpointing) from a "
      "YAML config.",
      "tft-train"};
  Options o;
  CLI::Option* config_option =
      app.add_option("--config", o.config, "training config (YAML, see docs/config.md)")
          ->type_name("FILE");
  tft_train::PredictOptions predict_options;
  CLI::App* predict = tft_train::add_predict_command(app, predict_options);
  tft_train::BacktestOptions backtest_options;
  CLI::App* backtest = tft_train::add_backtest_command(app, backtest_options);
  app.require_subcommand(0, 1);
  CLI::Option* data = app.add_option("--data", o.data,
                                     "data file instead of data.path (CSV, or Parquet by its "
                                     "extension or data.format)")
                          ->type_name("FILE");
  CLI::Option* parquet =
      app.add_option("--parquet-file", o.parquet_file, "Parquet file instead of data.path")
          ->type_name("FILE");
  data->excludes(parquet);
  CLI::Option* epochs = app.add_option("--epochs", o.epochs, "training.epochs")
                            ->check(integer_at_least<std::int64_t>(1))
                            ->type_name("N");
  CLI::Option* output = app.add_option("--output", o.output, "output.directory")->type_name("DIR");
  CLI::Option* use = app.add_flag("--use-gradient-checkpointing", o.use_checkpointing,
                                  "checkpoint every unit (unless the YAML sets a strategy)");
  CLI::Option* no = app.add_flag("--no-gradient-checkpointing", o.no_checkpointing,
                                 "turn gradient checkpointing off");
  use->excludes(no);
  CLI::Option* memory_budget =
      app.add_option(
             "--memory-budget", o.memory_budget,
             "checkpoint.memory_budget: the activation memory a step may use (3.5GiB, "
             "900MiB, bytes, or auto on CUDA); the planner picks the checkpointing, in place of "
             "the configured strategy")
          ->type_name("SIZE");
  memory_budget->excludes(no);
  app.add_flag("--use-qat", o.use_qat,
               "quantization-aware training (training.qat.enabled: fake-quantized int8 linear "
               "layers)");
  app.add_option("--set", o.settings,
                 "override a dotted config key, as tft_config_set_value does (repeatable)")
      ->type_name("KEY=VALUE")
      ->check([](const std::string& text) {
        return text.find('=') == std::string::npos || text.front() == '='
                   ? std::string("expected KEY=VALUE, got \"") + text + "\""
                   : std::string();
      });
  app.add_flag("--resume", o.resume, "continue from output/snapshots/last.pt when it exists");
  CLI::Option* init_from =
      app.add_option("--init-from", o.init_from,
                     "training.init_from: start from a saved model's weights and fitted state "
                     "(a refit, docs/refit.md)")
          ->type_name("MODEL_DIR");
  CLI::Option* threads = app.add_option("--threads", o.threads, "training.threads (0: default)")
                             ->check(integer_at_least<std::int64_t>(0))
                             ->type_name("N");
  CLI::Option* seed = app.add_option("--seed", o.seed, "training.seed")
                          ->check(integer_at_least<std::uint64_t>(0))
                          ->type_name("N");
  CLI::Option* device = app.add_option("--device", o.device, "training.device: cpu, cuda or cuda:N")
                            ->type_name("DEVICE");
  CLI::Option* precision =
      app.add_option("--precision", o.precision,
                     "training.precision: 32, bf16-mixed (CPU and CUDA) or 16-mixed (CUDA)")
          ->check(CLI::IsMember({"32", "32-true", "bf16-mixed", "16-mixed"}))
          ->type_name("PRECISION");
  app.add_option("--nproc", o.nproc,
                 "start N local ranks of a data-parallel job (docs/distributed.md)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return fail(kExitUsage, std::string(e.what()) + " (see tft-train --help)");
  }
  if (predict->parsed()) {
    try {
      tft_train::run_predict(predict_options);
      return 0;
    } catch (const std::exception& e) {
      return fail(kExitError, tft::error_text(e, "predicting"));
    }
  }
  if (backtest->parsed()) {
    tft::ProgressPrinter printer(stderr);
    try {
      const tft::TrainConfig config = tft_train::backtest_config(backtest_options);
      std::signal(SIGINT, on_interrupt);
      tft_train::run_backtest_command(config, printer, [] { return g_interrupted != 0; });
      return 0;
    } catch (const tft::CancelledError& e) {
      return fail(kExitInterrupted, e.what(), &printer);
    } catch (const std::exception& e) {
      return fail(kExitError, tft::error_text(e, "backtesting"), &printer);
    }
  }
  if (config_option->count() == 0) {
    return fail(kExitUsage,
                "--config is required (see tft-train --help; to forecast with a "
                "saved model: tft-train predict --model DIR)");
  }

  if (o.nproc > 1) {
    if (std::getenv("WORLD_SIZE") != nullptr) {
      return fail(kExitUsage,
                  "--nproc: WORLD_SIZE is set, so a launcher started this process "
                  "already; drop --nproc");
    }
    try {
      return tft_train::run_local_ranks(o.nproc, without_nproc(argc, argv));
    } catch (const std::exception& e) {
      return fail(kExitError, e.what());
    }
  }

  tft::ProgressPrinter printer(stderr);
  std::string rank_prefix;  // "rank R: " in a job of several ranks
  try {
    tft::TrainConfig config = tft::load_train_config_file(o.config);
    for (const std::string& setting : o.settings) {
      const std::size_t equals = setting.find('=');
      try {
        tft::set_config_value(config, setting.substr(0, equals), setting.substr(equals + 1));
      } catch (const tft::ConfigError& e) {
        throw tft::ConfigError("--set " + setting + ": " + e.what());
      }
    }
    if (data->count() > 0) config.data.path = absolute(o.data);
    if (parquet->count() > 0) {
      config.data.path = absolute(o.parquet_file);
      config.data.format = "parquet";
    }
    if (output->count() > 0) config.output.directory = absolute(o.output);
    if (init_from->count() > 0) config.training.init_from = absolute(o.init_from);
    if (epochs->count() > 0) config.training.epochs = o.epochs;
    if (threads->count() > 0) config.training.threads = o.threads;
    if (seed->count() > 0) config.training.seed = o.seed;
    if (device->count() > 0) config.training.device = o.device;
    if (precision->count() > 0)
      config.training.precision = *tft::precision_from_string(o.precision);
    if (memory_budget->count() > 0) {
      // The flag asks for the planner's choice: it replaces the strategy of the file (or of
      // --set), as --no-gradient-checkpointing does, rather than clash with it.
      config.checkpoint = tft::CheckpointConfig::none();
      try {
        tft::set_config_value(config, "checkpoint.memory_budget", o.memory_budget);
      } catch (const tft::ConfigError& e) {  // a bad flag value, as --epochs ten is
        return fail(kExitUsage, std::string("--memory-budget: ") + e.what());
      }
    }
    if (o.use_checkpointing &&
        std::holds_alternative<tft::NoCheckpointing>(config.checkpoint.strategy) &&
        !config.checkpoint.memory_budget) {
      config.checkpoint = tft::CheckpointConfig::uniform(1);
    }
    if (o.no_checkpointing) config.checkpoint = tft::CheckpointConfig::none();
    if (o.use_qat) config.training.qat.enabled = true;
    config.validate();

    std::signal(SIGINT, on_interrupt);
    tft::Trainer trainer(config);
    const bool lead = trainer.rank() == 0;
    if (trainer.world_size() > 1) {
      rank_prefix = "rank " + std::to_string(trainer.rank()) + ": ";
    }
    if (lead) {
      const std::string precision_note =
          config.training.precision == tft::Precision::Float32
              ? std::string()
              : std::string("; precision ") + tft::to_string(config.training.precision);
      if (!config.training.init_from.empty()) {
        std::fprintf(stderr, "tft-train: refit from %s\n", config.training.init_from.c_str());
      }
      // center auto's pilot fits ran while the trainer was made: say what they chose.
      const tft::TargetNormalizerConfig& normalizer =
          trainer.dataset().transforms().target_normalizer;
      if (config.data.target_normalizer.center == tft::TargetCenter::Auto) {
        std::fprintf(stderr, "tft-train: target center %s, scope %s (%s)\n",
                     tft::to_string(normalizer.center), tft::to_string(normalizer.scope),
                     trainer.dataset().target_center_reason().c_str());
      }
      std::fprintf(stderr,
                   "tft-train: %zu series, %zu training and %zu validation windows; %s%s%s\n",
                   trainer.dataset().series().size(), trainer.dataset().training_windows().size(),
                   trainer.dataset().validation_windows().size(),
                   config.checkpoint.summary().c_str(), precision_note.c_str(),
                   trainer.world_size() > 1
                       ? ("; " + std::to_string(trainer.world_size()) + " ranks").c_str()
                       : "");
      if (!trainer.compute_threads().warning.empty()) {
        std::fprintf(stderr, "tft-train: warning: %s\n", trainer.compute_threads().warning.c_str());
      }
    }
    const tft::TrainReport report = trainer.train(
        [&](const tft::TrainProgress& p) { return (!lead || printer(p)) && g_interrupted == 0; },
        o.resume);
    if (lead) std::cout << tft::summary_text(report) << std::flush;
    return 0;
  } catch (const tft::CancelledError& e) {
    return fail(kExitInterrupted, rank_prefix + e.what(), &printer);
  } catch (const tft::MemoryBudgetError& e) {
    return fail(kExitUsage, rank_prefix + e.what(), &printer);
  } catch (const std::exception& e) {
    return fail(kExitError, rank_prefix + tft::error_text(e, "training"), &printer);
  }
}
