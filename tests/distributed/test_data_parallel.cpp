// Data-parallel training end to end, with tft-train started the way torchrun starts it (one
// process per rank, RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT in the environment) and with
// --nproc, on 127.0.0.1:
//   - two ranks with batch B end an epoch like one process with batch 2B on the same windows
//     (dropout off: each rank draws its own masks), within stated bounds: the reduction order
//     differs, and Adam magnifies rounding in near-zero gradients to lr-sized steps;
//   - --nproc 2 is that same job, bitwise;
//   - a two-rank run resumed from its snapshot ends bitwise like an uninterrupted one;
//   - a rank killed mid-epoch makes the other exit non-zero, naming itself, within the timeout;
//   - Ctrl-C to one rank stops both at the same step, as a cancellation;
//   - an inconsistent environment is a one-line error, and so is the nccl backend on a CPU;
//   - the backend `auto` picks: NCCL for CUDA devices where the build has it, else Gloo.
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "distributed/launch_env.h"
#include "store/module_state.h"
#include "store/saved_model.h"
#include "train/data_parallel.h"

#include "train/train_test_support.h"

#include "support/test_files.h"
#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using namespace tft::testing;
using Clock = std::chrono::steady_clock;

namespace {

// Per-rank batch 16 over 3 series x 70 steps; 10 s for a rank to give up on the others.
std::string config_text(int batch_size, int epochs) {
  return "data:\n"
         "  path: data.csv\n"
         "  time_column: t\n"
         "  group_columns: [series]\n"
         "  target: y\n"
         "  static_categoricals: [series]\n"
         "  known_reals: [season_sin, season_cos]\n"
         "  unknown_reals: [lagged]\n"
         "windows: {encoder_length: 8, prediction_length: 3}\n"
         "split: {validation_steps: 10}\n"
         "model: {hidden_size: 8, attention_heads: 2, dropout: 0.0}\n"
         "training:\n"
         "  epochs: " +
         std::to_string(epochs) +
         "\n"
         "  batch_size: " +
         std::to_string(batch_size) +
         "\n"
         "  learning_rate: 0.01\n"
         "  lr_schedule: {kind: none}\n"
         "  early_stopping_patience: 0\n"
         "  seed: 3\n"
         "  threads: 1\n"
         "  distributed: {timeout_seconds: 10}\n"
         "checkpoint: {strategy: uniform, interval: 1}\n";
}

int shell(const std::string& script) {
  const int raw = std::system(script.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// tft-train as one rank of two, torchrun's way; its exit status goes to DIR/rankR.status.
std::string rank_command(const fs::path& dir, int rank, int port, const std::string& args) {
  const std::string r = std::to_string(rank);
  return "env RANK=" + r + " LOCAL_RANK=" + r + " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 " +
         "MASTER_PORT=" + std::to_string(port) + " '" + tft_train_executable() + "' " + args +
         " >" + quoted(dir / ("rank" + r + ".out")) + " 2>" + quoted(dir / ("rank" + r + ".err"));
}

// Both ranks, to the end; fails the test when one exits non-zero.
void run_two_ranks(const fs::path& dir, const std::string& args) {
  const int port = tft::distributed::free_local_port();
  const int status =
      shell("(" + rank_command(dir, 1, port, args) + "; echo $? >" + quoted(dir / "rank1.status") +
            ") & " + rank_command(dir, 0, port, args) + "; s=$?; wait; exit $s");
  const std::string rank1 = read_text(dir / "rank1.status");
  if (status != 0 || rank1 != "0\n") {
    fail_msg("ranks exited %d and %s: %s%s", status, rank1.c_str(),
             read_text(dir / "rank0.err").c_str(), read_text(dir / "rank1.err").c_str());
  }
}

void run_one(const fs::path& dir, const std::string& args) {
  const int status = shell("'" + tft_train_executable() + "' " + args + " >" +
                           quoted(dir / "one.out") + " 2>" + quoted(dir / "one.err"));
  if (status != 0) fail_msg("exit %d: %s", status, read_text(dir / "one.err").c_str());
}

double max_weight_difference(const fs::path& a, const fs::path& b) {
  const tft::ModuleState x = tft::copy_module_state(*tft::SavedModel::load(a).model());
  const tft::ModuleState y = tft::copy_module_state(*tft::SavedModel::load(b).model());
  assert_int_equal(x.parameters.size(), y.parameters.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < x.parameters.size(); ++i) {
    worst = std::max(worst,
                     (x.parameters[i].second - y.parameters[i].second).abs().max().item<double>());
  }
  return worst;
}

std::vector<nlohmann::json> metrics(const fs::path& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_text(out / "metrics.jsonl"));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

fs::path prepared(const std::string& name) {
  const fs::path dir = scratch_dir(name);
  write_text(dir / "data.csv", synthetic_csv(70));
  write_text(dir / "ranks.yaml", config_text(16, 3));
  write_text(dir / "one.yaml", config_text(32, 3));
  return dir;
}

}  // namespace

TFT_TEST(two_ranks_end_like_one_process_with_twice_the_batch) {
  const fs::path dir = prepared("dp_equal");
  run_one(dir, "--config " + quoted(dir / "one.yaml") + " --output " + quoted(dir / "one") +
                   " --epochs 1");
  run_two_ranks(dir, "--config " + quoted(dir / "ranks.yaml") + " --output " + quoted(dir / "two") +
                         " --epochs 1");
  // Rank 0 alone prints the summary.
  assert_true(read_text(dir / "rank0.out").find("Training summary") != std::string::npos);
  assert_true(read_text(dir / "rank1.out").empty());

  // The same windows and the same gradient in exact arithmetic; in floating point the sums
  // over the batch run in another order (two halves, then the all-reduce), and Adam turns a
  // rounding-level difference in a near-zero gradient into a different step of size lr. How
  // large that is depends on the CPU's kernels. So one epoch (5 steps) is compared, within
  // bounds well above what was measured (validation loss 3.5e-6 relative and weights 1.9e-5
  // apart on an Intel Xeon; validation loss 1.8e-5 relative on an AMD EPYC) and well below
  // what a wrong average gives (a rank's gradient lost or counted twice moves the losses by
  // percents): 1e-4 relative for the losses, 1e-3 for the weights (one flipped Adam step
  // would be 2 lr = 0.02).
  const double difference = max_weight_difference(dir / "one" / "model", dir / "two" / "model");
  std::printf("  largest weight difference after one epoch: %.3g\n", difference);
  assert_true(difference < 1e-3);
  const auto one = metrics(dir / "one"), two = metrics(dir / "two");
  assert_int_equal(one.size(), 1);
  assert_int_equal(two.size(), 1);
  for (const char* key : {"train_loss", "validation_loss", "q_risk_p50"}) {
    const double a = one[0].at(key).get<double>(), b = two[0].at(key).get<double>();
    std::printf("  %s: one process %.12g, two ranks %.12g\n", key, a, b);
    if (!(std::fabs(a - b) <= 1e-4 * std::fabs(a))) fail_msg("%s differs", key);
  }

  // --nproc 2 starts the same job: the same weights, bit for bit.
  run_one(dir, "--config " + quoted(dir / "ranks.yaml") + " --output " + quoted(dir / "nproc") +
                   " --nproc 2 --epochs 1");
  assert_true(max_weight_difference(dir / "two" / "model", dir / "nproc" / "model") == 0.0);
  fs::remove_all(dir);
}

TFT_TEST(a_two_rank_resume_ends_bitwise_like_an_uninterrupted_run) {
  const fs::path dir = prepared("dp_resume");
  write_text(dir / "four.yaml", config_text(16, 4));
  run_one(dir, "--config " + quoted(dir / "four.yaml") + " --output " + quoted(dir / "straight") +
                   " --nproc 2");
  run_one(dir, "--config " + quoted(dir / "four.yaml") + " --output " + quoted(dir / "broken") +
                   " --nproc 2 --epochs 2");
  run_one(dir, "--config " + quoted(dir / "four.yaml") + " --output " + quoted(dir / "broken") +
                   " --nproc 2 --resume");
  assert_true(max_weight_difference(dir / "straight" / "model", dir / "broken" / "model") == 0.0);
  const auto a = metrics(dir / "straight"), b = metrics(dir / "broken");
  assert_int_equal(b.size(), 4);
  for (std::size_t e = 0; e < 4; ++e) {
    assert_true(a[e].at("train_loss") == b[e].at("train_loss"));
    assert_true(a[e].at("validation_loss") == b[e].at("validation_loss"));
  }
  fs::remove_all(dir);
}

// The error line (the last one: the progress printer's epoch lines come first).
std::string last_line(const std::string& text) {
  return text.substr(text.rfind('\n', text.size() - 2) + 1);
}

// Starts two ranks on a run long enough never to end by itself, sends `signal` to rank 1 once
// an epoch has finished (metrics.jsonl exists) and waits for both; their exit statuses go to
// DIR/rankR.status. ($! of `env ... tft-train &` is tft-train itself: env execs it.)
void signal_rank_1_after_an_epoch(const fs::path& dir, const char* signal) {
  write_text(dir / "long.yaml", config_text(16, 100000));
  const int port = tft::distributed::free_local_port();
  const std::string args =
      "--config " + quoted(dir / "long.yaml") + " --output " + quoted(dir / "out");
  const int status =
      shell(rank_command(dir, 1, port, args) + " & p=$!; (" + rank_command(dir, 0, port, args) +
            "; echo $? >" + quoted(dir / "rank0.status") + ") & q=$!; " +
            "for i in $(seq 200); do [ -f " + quoted(dir / "out" / "metrics.jsonl") +
            " ] && break; sleep 0.1; done; kill -" + signal + " $p; wait $p; " + "echo $? >" +
            quoted(dir / "rank1.status") + "; wait $q");
  assert_int_equal(status, 0);
}

TFT_TEST(a_killed_rank_makes_the_other_fail_within_the_timeout) {
  const fs::path dir = prepared("dp_kill");
  const auto start = Clock::now();
  signal_rank_1_after_an_epoch(dir, "KILL");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string rank0 = read_text(dir / "rank0.status");
  const std::string last = last_line(read_text(dir / "rank0.err"));
  std::printf("  rank 0 exited %s  after %.1f s: %s", rank0.c_str(), seconds, last.c_str());
  assert_true(rank0 == "1\n");
  assert_true(last.rfind("tft-train: rank 0: distributed: rank 0 of 2: ", 0) == 0);
  assert_true(last.find("failed") != std::string::npos);
  assert_true(seconds < 20.0 + 10.0 + 5.0);  // the first epoch, the 10 s timeout, slack
  fs::remove_all(dir);
}

// SIGINT to rank 1 alone: rank 0 must stop with it, at the same step.
TFT_TEST(an_interrupted_rank_stops_every_rank_at_the_same_step) {
  const fs::path dir = prepared("dp_interrupt");
  signal_rank_1_after_an_epoch(dir, "INT");
  const std::string err0 = last_line(read_text(dir / "rank0.err"));
  const std::string err1 = last_line(read_text(dir / "rank1.err"));
  std::printf("  %s  %s", err0.c_str(), err1.c_str());
  assert_string_equal(read_text(dir / "rank0.status").c_str(), "130\n");
  assert_string_equal(read_text(dir / "rank1.status").c_str(), "130\n");
  const std::string where0 = err0.substr(err0.find("training cancelled at"));
  const std::string where1 = err1.substr(err1.find("training cancelled at"));
  assert_string_equal(where0.c_str(), where1.c_str());
  fs::remove_all(dir);
}

// tft-train as rank RANK of 2 with `config` and a master nobody serves; returns its exit status and
// leaves its stderr in dir/err.
int run_as_rank_of_2(const fs::path& dir, const std::string& rank, const fs::path& config) {
  return shell("env RANK=" + rank + " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 '" +
               tft_train_executable() + "' --config " + quoted(config) + " --output " +
               quoted(dir / "out") + " 2>" + quoted(dir / "err"));
}

TFT_TEST(an_inconsistent_environment_is_a_clear_error) {
  const fs::path dir = prepared("dp_env");
  assert_int_equal(run_as_rank_of_2(dir, "2", dir / "ranks.yaml"), 1);
  const std::string err = read_text(dir / "err");
  assert_true(err.find("RANK=\"2\": expected a whole number from 0 to 1 (below WORLD_SIZE=2)") !=
              std::string::npos);

  // nccl asked for on a CPU: a config error before the job is joined (no master to reach).
  std::string yaml = read_text(dir / "ranks.yaml");
  yaml.replace(yaml.find("timeout_seconds: 10}"), 20, "timeout_seconds: 10, backend: nccl}");
  write_text(dir / "nccl.yaml", yaml);
  assert_int_equal(run_as_rank_of_2(dir, "0", dir / "nccl.yaml"), 1);
  const std::string nccl_err = read_text(dir / "err");
  std::printf("  %s", nccl_err.c_str());
  assert_true(nccl_err.find("training.distributed.backend: nccl reduces CUDA tensors only, and "
                            "training.device is cpu") != std::string::npos);
  fs::remove_all(dir);
}

TFT_TEST(the_backend_follows_the_device_and_the_build) {
  using tft::choose_backend;
  using tft::DistributedBackend;
  const c10::Device cpu(c10::DeviceType::CPU), gpu(c10::DeviceType::CUDA, 1);
  for (const bool nccl_built : {false, true}) {
    assert_true(choose_backend(DistributedBackend::Gloo, cpu, nccl_built) ==
                DistributedBackend::Gloo);
    assert_true(choose_backend(DistributedBackend::Gloo, gpu, nccl_built) ==
                DistributedBackend::Gloo);
    assert_true(choose_backend(DistributedBackend::Auto, cpu, nccl_built) ==
                DistributedBackend::Gloo);
    TFT_ASSERT_THROWS_WITH(choose_backend(DistributedBackend::Nccl, cpu, nccl_built),
                           tft::ConfigError, "nccl reduces CUDA tensors only");
  }
  assert_true(choose_backend(DistributedBackend::Auto, gpu, true) == DistributedBackend::Nccl);
  assert_true(choose_backend(DistributedBackend::Auto, gpu, false) == DistributedBackend::Gloo);
  assert_true(choose_backend(DistributedBackend::Nccl, gpu, true) == DistributedBackend::Nccl);
  TFT_ASSERT_THROWS_WITH(choose_backend(DistributedBackend::Nccl, gpu, false),
                         tft::UnsupportedError, "nccl is not in this build");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_ranks_end_like_one_process_with_twice_the_batch),
      cmocka_unit_test(a_two_rank_resume_ends_bitwise_like_an_uninterrupted_run),
      cmocka_unit_test(a_killed_rank_makes_the_other_fail_within_the_timeout),
      cmocka_unit_test(an_interrupted_rank_stops_every_rank_at_the_same_step),
      cmocka_unit_test(an_inconsistent_environment_is_a_clear_error),
      cmocka_unit_test(the_backend_follows_the_device_and_the_build),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
