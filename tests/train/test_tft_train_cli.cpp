// The tft-train runner end to end: a tiny config trains and writes its files (exit 0), flags
// override the YAML, --resume continues, and every failure exits non-zero with one line
// "tft-train: <reason>" (a missing file, a bad flag, conflicting flags), and a run killed with
// SIGKILL inside an epoch resumes from its last step snapshot to end like an uninterrupted one.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/saved_model.h"

#include "train/train_test_support.h"

#include "support/test_files.h"
#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using namespace tft::testing;

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

Run run(const fs::path& dir, const std::string& arguments) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string command = "'" + tft_train_executable() + "' " + arguments + " >'" +
                              out.string() + "' 2>'" + err.string() + "'";
  const int raw = std::system(command.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

// stderr is exactly one line "tft-train: ...".
void expect_one_line_error(const Run& r, const char* needle) {
  if (r.err.rfind("tft-train: ", 0) != 0 || r.err.find('\n') != r.err.size() - 1) {
    fail_msg("expected one line 'tft-train: ...', got: %s", r.err.c_str());
  }
  if (r.err.find(needle) == std::string::npos) {
    fail_msg("message lacks '%s': %s", needle, r.err.c_str());
  }
}

const char* kConfig = R"(data:
  path: data.csv
  time_column: t
  group_columns: [series]
  target: y
  static_categoricals: [series]
  known_reals: [season_sin, season_cos]
  unknown_reals: [lagged]
windows: {encoder_length: 8, prediction_length: 3}
split: {validation_steps: 10}
model: {hidden_size: 8, attention_heads: 2}
training: {epochs: 5, batch_size: 32, learning_rate: 0.01, seed: 3}
output: {directory: from-yaml}
)";

// Two forecast.csv rows with the same labels and quantiles equal to 1e-6 relative.
bool same_forecast_row(const std::string& a, const std::string& b) {
  const auto fields = [](const std::string& row) {
    std::vector<std::string> out;
    std::istringstream in(row);
    for (std::string field; std::getline(in, field, ',');) out.push_back(field);
    return out;
  };
  const std::vector<std::string> x = fields(a), y = fields(b);
  if (x.size() != y.size() || x.size() < 8) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i < 5 || i >= 8) {
      if (x[i] != y[i]) return false;
      continue;
    }
    const double u = std::stod(x[i]), v = std::stod(y[i]);
    if (std::abs(u - v) > 1e-6 * std::max(std::abs(u), std::abs(v))) return false;
  }
  return true;
}

}  // namespace

TFT_TEST(test_trains_and_writes_files) {
  const fs::path dir = scratch_dir("cli_ok");
  write_text(dir / "data.csv", synthetic_csv(50));
  write_text(dir / "run.yaml", kConfig);
  const fs::path out = dir / "out";
  Run r =
      run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 2 --threads 1 --output '" +
                   out.string() + "' --use-gradient-checkpointing");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("Training summary") != std::string::npos);
  assert_true(r.out.find("q-risk P50") != std::string::npos);
  assert_true(r.out.find("checkpointing                      every unit (6)") != std::string::npos);
  for (const char* name :
       {"model/weights.pt", "forecast.csv", "forecast.svg", "summary.json", "interpretation.json",
        "interpretation.svg", "metrics.jsonl", "snapshots/last.pt"}) {
    if (!fs::exists(out / name)) fail_msg("missing %s", name);
  }
  assert_false(fs::exists(dir / "from-yaml"));  // --output won
  const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
  assert_int_equal(summary.at("epochs_run").get<int>(), 2);

  // --resume continues from the snapshot; --no-gradient-checkpointing turns it off.
  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 3 --threads 1 --output '" +
                   out.string() + "' --resume --no-gradient-checkpointing");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("(resumed after epoch 2)") != std::string::npos);
  assert_true(r.out.find("checkpointing                      none of 6 units") !=
              std::string::npos);

  // --init-from refits the saved model (docs/refit.md): the summary names it; a --set that
  // contradicts its architecture is one line, and nothing is written.
  const fs::path refit = dir / "refit";
  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 1 --threads 1 --output '" +
                   refit.string() + "' --init-from '" + (out / "model").string() + "'");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("started from (refit)               " + (out / "model").string()) !=
              std::string::npos);
  assert_true(r.err.find("tft-train: refit from ") != std::string::npos);
  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --output '" +
                   (dir / "refit_bad").string() + "' --init-from '" + (out / "model").string() +
                   "' --set model.hidden_size=12");
  assert_int_equal(r.status, 1);
  assert_true(r.err.find("model.hidden_size is 12 here but") != std::string::npos);
  assert_false(fs::exists(dir / "refit_bad"));

  // backtest: without --output it writes beside the config's run, into output.directory/backtest.
  r = run(dir, "backtest --config '" + (dir / "run.yaml").string() +
                   "' --folds 2 --threads 1 --set training.epochs=1");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("Backtest summary (scratch, 2 of 2 folds)") != std::string::npos);
  assert_true(r.err.find("tft-train backtest: fold 2 of 2") != std::string::npos);
  for (const char* name : {"backtest.csv", "backtest.json", "backtest.svg", "folds/fold-2/model"}) {
    if (!fs::exists(dir / "from-yaml" / "backtest" / name)) fail_msg("missing backtest/%s", name);
  }
  assert_false(fs::exists(dir / "from-yaml" / "model"));
  r = run(dir, "backtest --config '" + (dir / "run.yaml").string() + "' --folds 500");
  assert_int_equal(r.status, 1);
  assert_true(r.err.find("backtest.folds 500") != std::string::npos);
  fs::remove_all(dir / "from-yaml");

  // --use-qat with checkpointing; --set reaches any dotted key.
  const fs::path qat = dir / "qat";
  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 2 --threads 1 --output '" +
                   qat.string() + "' --use-gradient-checkpointing --use-qat" +
                   " --set training.qat.activation_bits=7 --set training.qat.start_epoch=2");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("quantization-aware training        8-bit weights, 7-bit inputs, from "
                         "epoch 2") != std::string::npos);
  const auto model_config = nlohmann::json::parse(read_text(qat / "model/model_config.json"));
  assert_int_equal(model_config.at("quantization").at("activation_bits").get<int>(), 7);
  assert_int_equal(
      nlohmann::json::parse(read_text(qat / "summary.json")).at("best_epoch").get<int>(), 2);
  fs::remove_all(dir);
}

// The future rows of a CSV written by forecast_csv, in order.
std::vector<std::string> future_rows(const std::string& csv) {
  std::vector<std::string> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("future,", 0) == 0) rows.push_back(line);
  }
  return rows;
}

TFT_TEST(predict_forecasts_new_data_with_a_saved_model) {
  const fs::path dir = scratch_dir("cli_predict");
  const std::string csv = synthetic_csv(50);
  write_text(dir / "data.csv", csv);
  write_text(dir / "run.yaml", kConfig);
  const fs::path out = dir / "out";
  // Global scaling, so a series the model has not seen can be scaled too.
  Run r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 1 --threads 1 " +
                       "--set data.scaling=global --output '" + out.string() + "'");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());

  // The training data again: the same forecasts as the run wrote, byte for byte.
  const fs::path predicted = dir / "predicted";
  r = run(dir, "predict --model '" + (out / "model").string() + "' --output '" +
                   predicted.string() + "'");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("3 series: forecasts of the next 3 steps in") != std::string::npos);
  const std::string forecast = read_text(predicted / "forecast.csv");
  assert_true(forecast.rfind("kind,series,origin,time,horizon,q0.1,q0.5,q0.9,actual\n", 0) == 0);
  const std::vector<std::string> rows = future_rows(forecast);
  assert_int_equal(static_cast<int>(rows.size()), 9);
  assert_true(rows == future_rows(read_text(out / "forecast.csv")));
  assert_int_equal(std::count(forecast.begin(), forecast.end(), '\n'), 10);  // header + 9

  // New data: series a, and a series z the model has not seen (its category goes to the
  // unknown bucket, with a warning).
  std::string fresh = csv.substr(0, csv.find("\nb,") + 1);
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (line.rfind("a,", 0) == 0) fresh += "z" + line.substr(1) + "\n";
  }
  write_text(dir / "fresh.csv", fresh);
  r = run(dir, "predict --model '" + (out / "model").string() + "' --data '" +
                   (dir / "fresh.csv").string() + "' --output '" + predicted.string() + "'");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.err.find("warning: column 'series': 1 value(s) the model has not seen") !=
              std::string::npos);
  const std::vector<std::string> fresh_rows = future_rows(read_text(predicted / "forecast.csv"));
  assert_int_equal(static_cast<int>(fresh_rows.size()), 6);
  // Series a: as before, to float32 rounding (the products see 2 series instead of 3, and a
  // product's blocking, so its last bit, may depend on its row count).
  assert_true(same_forecast_row(fresh_rows[0], rows[0]));
  assert_true(fresh_rows[3].rfind("future,z,", 0) == 0);

  r = run(dir, "predict --output x");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, "--model is required");
  r = run(dir, "predict --model '" + (dir / "nowhere").string() + "'");
  assert_int_equal(r.status, 1);
  expect_one_line_error(r, "nowhere");
  fs::remove_all(dir);
}

TFT_TEST(test_failures_exit_non_zero_with_one_line) {
  const fs::path dir = scratch_dir("cli_fail");
  write_text(dir / "run.yaml", kConfig);  // its data.csv does not exist

  const std::string config = " --config '" + (dir / "run.yaml").string() + "'";
  struct Case {
    std::string arguments;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"--config '" + (dir / "missing.yaml").string() + "'", 1, "missing.yaml"},
      {config, 1, "data.csv"},
      {config + " --bogus", 2, "bogus"},
      {"--config x.yaml --use-gradient-checkpointing --no-gradient-checkpointing", 2, "excludes"},
      {"--epochs 3", 2, "--config"},
      {config + " --epochs ten", 2, "epochs"},
      {config + " --set training.epochs", 2, "expected KEY=VALUE, got \"training.epochs\""},
      {config + " --set training.qat.enabled=maybe", 1,
       "--set training.qat.enabled=maybe: training.qat.enabled: expected true or false, got "
       "\"maybe\""},
      {config + " --set training.epoch=3", 1,
       "--set training.epoch=3: training: unknown key 'epoch'"},
      {config + " --precision fp16", 2, "--precision: fp16 not in"},
      {config + " --memory-budget 3.5GB", 2,
       "--memory-budget: checkpoint.memory_budget: unknown unit 'GB' in \"3.5GB\""},
      {config + " --memory-budget 1GiB --no-gradient-checkpointing", 2, "excludes"},
      {config + " --precision 16-mixed", 1, "training.precision: 16-mixed needs a CUDA device"},
  };
  for (const Case& c : cases) {
    const Run failed = run(dir, c.arguments);
    assert_int_equal(failed.status, c.status);
    expect_one_line_error(failed, c.message.c_str());
  }

  const Run help = run(dir, "--help");
  assert_int_equal(help.status, 0);
  assert_true(help.out.find("--use-gradient-checkpointing") != std::string::npos);
  fs::remove_all(dir);
}

// --memory-budget: a budget that fits trains and says so (in place of the strategy the file or
// --set gave); one below every plan exits with 2
// and one line, writes nothing, and names a batch size that then trains under the same budget.
TFT_TEST(memory_budget_plans_or_says_what_fits) {
  const fs::path dir = scratch_dir("cli_budget");
  write_text(dir / "data.csv", synthetic_csv(50));
  write_text(dir / "run.yaml", kConfig);
  const std::string base = "--config '" + (dir / "run.yaml").string() + "' --epochs 1 --threads 1";
  Run r =
      run(dir, base + " --output '" + (dir / "roomy").string() +
                   "' --set 'checkpoint={strategy: uniform, interval: 1}' --memory-budget 1GiB");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("checkpoint plan                    budget 1.00 GiB -> no unit") !=
              std::string::npos);
  const auto summary = nlohmann::json::parse(read_text(dir / "roomy" / "summary.json"));
  assert_int_equal(
      summary.at("memory").at("plan").at("memory_budget").at("budget_bytes").get<long>(), 1L << 30);

  // 1 KiB fits nothing; the message gives the floor, which sizes the real test below (0.9 of
  // it: above the part of the floor that does not shrink with the batch).
  const fs::path none = dir / "none";
  r = run(dir, base + " --output '" + none.string() + "' --memory-budget 1KiB");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r,
                        "checkpoint.memory_budget: 1 KiB fits no checkpoint plan at "
                        "training.batch_size 32: the smallest peak is ");
  assert_false(fs::exists(none));
  const std::string smallest = "the smallest peak is ";
  const double floor_kib = std::stod(r.err.substr(r.err.find(smallest) + smallest.size()));
  assert_true(r.err.find(" KiB (every unit checkpointed") != std::string::npos);
  const std::string budget = std::to_string(static_cast<long>(floor_kib * 0.9)) + "KiB";
  r = run(dir, base + " --output '" + none.string() + "' --memory-budget " + budget);
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, " fits (measured: ");
  assert_false(fs::exists(none));
  const std::string fits = "; batch_size ";
  const long rows = std::stol(r.err.substr(r.err.find(fits) + fits.size()));
  assert_true(rows >= 1 && rows < 32);
  const fs::path smaller = dir / "smaller";
  r = run(dir, base + " --output '" + smaller.string() + "' --memory-budget " + budget +
                   " --set training.batch_size=" + std::to_string(rows));
  if (r.status != 0) fail_msg("batch_size %ld: exit %d: %s", rows, r.status, r.err.c_str());
  const auto plan =
      nlohmann::json::parse(read_text(smaller / "summary.json")).at("memory").at("plan");
  assert_true(plan.at("measured_peak_bytes").get<long>() <=
              plan.at("memory_budget").at("budget_bytes").get<long>());
  fs::remove_all(dir);
}

namespace {

// Many small steps per epoch (batch_size 4: 45 steps), a snapshot every 5.
const char* kStepSnapshotConfig = R"(data:
  path: data.csv
  time_column: t
  group_columns: [series]
  target: y
  static_categoricals: [series]
  known_reals: [season_sin, season_cos]
  unknown_reals: [lagged]
windows: {encoder_length: 8, prediction_length: 3}
split: {validation_steps: 10}
model: {hidden_size: 8, attention_heads: 2, dropout: 0.1}
training: {epochs: 2, batch_size: 4, learning_rate: 0.01, seed: 5, threads: 1,
           snapshot_every_steps: 5}
checkpoint: {strategy: uniform, interval: 1}
)";

// Starts tft-train with `arguments` (its output to files in `dir`); returns its pid.
pid_t spawn_tft_train(const fs::path& dir, const std::vector<std::string>& arguments) {
  std::vector<std::string> words = {tft_train_executable()};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir / "killed.out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir / "killed.err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  assert_int_equal(error, 0);
  return pid;
}

// The (train_loss, validation loss) of every epoch in a run's metrics.jsonl.
std::vector<std::pair<double, double>> epoch_losses(const fs::path& output) {
  std::vector<std::pair<double, double>> losses;
  std::istringstream lines(read_text(output / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    losses.emplace_back(j.at("train_loss").get<double>(), j.at("validation_loss").get<double>());
  }
  return losses;
}

}  // namespace

TFT_TEST(test_kill_9_inside_an_epoch_then_resume_ends_like_an_uninterrupted_run) {
  const fs::path dir = scratch_dir("cli_kill");
  write_text(dir / "data.csv", synthetic_csv(80));
  write_text(dir / "run.yaml", kStepSnapshotConfig);
  const std::string config = (dir / "run.yaml").string();
  Run r = run(dir, "--config '" + config + "' --output '" + (dir / "straight").string() + "'");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());

  // Killed as soon as its first snapshot (epoch 1, step 5) is on disk, 40 steps before the
  // epoch ends. On a machine so loaded that the kill comes after the epoch's end, try again.
  bool resumed_inside_an_epoch = false;
  for (int attempt = 0; attempt < 3 && !resumed_inside_an_epoch; ++attempt) {
    const fs::path out = dir / ("killed_" + std::to_string(attempt));
    const pid_t pid = spawn_tft_train(dir, {"--config", config, "--output", out.string()});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!fs::exists(out / "snapshots" / "last.pt") &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status)) fail_msg("tft-train ended before the kill: %d", status);
    assert_false(fs::exists(out / "summary.json"));

    r = run(dir, "--config '" + config + "' --output '" + out.string() + "' --resume");
    if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
    resumed_inside_an_epoch = r.out.find("(resumed at epoch 1, step ") != std::string::npos;
    // Wherever the kill landed, the run ends as if it had not happened.
    assert_true(epoch_losses(out) == epoch_losses(dir / "straight"));
    tft::SavedModel killed = tft::SavedModel::load(out / "model");
    tft::SavedModel straight = tft::SavedModel::load(dir / "straight" / "model");
    assert_true(same_weights(killed.model(), straight.model()));
  }
  assert_true(resumed_inside_an_epoch);
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trains_and_writes_files),
      cmocka_unit_test(predict_forecasts_new_data_with_a_saved_model),
      cmocka_unit_test(test_failures_exit_non_zero_with_one_line),
      cmocka_unit_test(memory_budget_plans_or_says_what_fits),
      cmocka_unit_test(test_kill_9_inside_an_epoch_then_resume_ends_like_an_uninterrupted_run),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
