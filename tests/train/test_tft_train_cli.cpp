// The tft-train runner end to end: a tiny config trains and writes its files (exit 0), flags
// override the YAML, --resume continues, and every failure exits non-zero with one line
// "tft-train: <reason>" (a missing file, a bad flag, conflicting flags).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "train/train_test_support.h"

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
  const std::string command = std::string("'") + TFT_TRAIN_EXECUTABLE + "' " + arguments + " >'" +
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

}  // namespace

TFT_TEST(test_trains_and_writes_files) {
  const fs::path dir = scratch_dir("cli_ok");
  write_text(dir / "data.csv", synthetic_csv(50));
  write_text(dir / "run.yaml", kConfig);
  const fs::path out = dir / "out";
  Run r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs 2 --threads 1 --output '" +
                       out.string() + "' --use-gradient-checkpointing");
  if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err.c_str());
  assert_true(r.out.find("Training summary") != std::string::npos);
  assert_true(r.out.find("q-risk P50") != std::string::npos);
  assert_true(r.out.find("Uniform checkpointing every 1 layers") != std::string::npos);
  for (const char* name : {"model/weights.pt", "forecast.csv", "forecast.svg", "summary.json",
                           "interpretation.json", "metrics.jsonl", "snapshots/last.pt"}) {
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
  assert_true(r.out.find("No checkpointing") != std::string::npos);
  fs::remove_all(dir);
}

TFT_TEST(test_failures_exit_non_zero_with_one_line) {
  const fs::path dir = scratch_dir("cli_fail");
  write_text(dir / "run.yaml", kConfig);  // its data.csv does not exist

  Run r = run(dir, "--config '" + (dir / "missing.yaml").string() + "'");
  assert_int_equal(r.status, 1);
  expect_one_line_error(r, "missing.yaml");

  r = run(dir, "--config '" + (dir / "run.yaml").string() + "'");
  assert_int_equal(r.status, 1);
  expect_one_line_error(r, "data.csv");

  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --bogus");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, "bogus");

  r = run(dir, "--config x.yaml --use-gradient-checkpointing --no-gradient-checkpointing");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, "excludes");

  r = run(dir, "--epochs 3");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, "--config");

  r = run(dir, "--config '" + (dir / "run.yaml").string() + "' --epochs ten");
  assert_int_equal(r.status, 2);
  expect_one_line_error(r, "epochs");

  r = run(dir, "--help");
  assert_int_equal(r.status, 0);
  assert_true(r.out.find("--use-gradient-checkpointing") != std::string::npos);
  fs::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trains_and_writes_files),
      cmocka_unit_test(test_failures_exit_non_zero_with_one_line),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
