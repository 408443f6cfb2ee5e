// The torchrun environment read strictly, and ProcessGroup between two real processes on
// 127.0.0.1: broadcast, bucketed gradient averaging, metric sums, and the failures a job must
// report instead of hanging (a rank that dies, one that hangs, one that never comes). In a build
// with NCCL on a machine with GPUs, the same collectives on GPU tensors through NCCL (skipped
// elsewhere).
//
// Rank 1 is this executable started again as `test_distributed --worker SCENARIO PORT` (a new
// process, not a fork: forking after LibTorch has started its thread pools is unsafe).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <csignal>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include "common/device.h"
#include "common/error.h"
#include "distributed/launch_env.h"
#include "distributed/process_group.h"

#include "support/cmocka_cpp.h"

extern char** environ;

namespace {

using tft::DistributedBackend;
using tft::distributed::LaunchEnv;
using tft::distributed::ProcessGroup;
using Clock = std::chrono::steady_clock;

const std::chrono::milliseconds kTimeout(3000);

LaunchEnv loopback(int rank, int port, int world_size = 2) {
  LaunchEnv env;
  env.rank = rank;
  env.world_size = world_size;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  return env;
}

std::string self_path() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) fail_msg("readlink /proc/self/exe failed");
  return std::string(path, static_cast<std::size_t>(n));
}

pid_t start_worker(const char* scenario, int port) {
  const std::string exe = self_path(), port_text = std::to_string(port);
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("--worker"),
                  const_cast<char*>(scenario), const_cast<char*>(port_text.c_str()), nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, environ) != 0) {
    fail_msg("cannot start the rank-1 worker");
  }
  return pid;
}

int wait_worker(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What rank r holds before the collectives: its own numbers, so that the results tell the
// ranks apart. Three dtypes' worth of "gradients" and a bucket limit that splits them.
std::vector<at::Tensor> rank_parameters(int rank, const c10::Device& device = at::kCPU) {
  std::vector<at::Tensor> params = {at::zeros({3, 4}), at::zeros({5}),
                                    at::zeros({2, 2}, at::kDouble), at::zeros({7})};
  for (std::size_t i = 0; i < params.size(); ++i) {
    params[i] = params[i].to(device).requires_grad_(true);
    params[i].mutable_grad() =
        at::full(params[i].sizes(), (rank + 1) * (static_cast<double>(i) + 1), params[i].options());
  }
  return params;
}

// The collectives scenario, as any rank of any world size, on tensors on `device`; returns an
// empty string or what went wrong.
std::string run_collectives(ProcessGroup& group, const c10::Device& device = at::kCPU) {
  const int rank = group.rank();
  const double world = group.world_size();
  // broadcast: rank 0's values everywhere
  std::vector<at::Tensor> weights = {at::full({2, 3}, rank == 0 ? 1.5 : -7.0).to(device),
                                     (at::arange(5, at::kLong) * (rank + 1)).to(device)};
  group.broadcast(weights);
  if (!at::equal(weights[0].cpu(), at::full({2, 3}, 1.5)) ||
      !at::equal(weights[1].cpu(), at::arange(5, at::kLong))) {
    return "broadcast did not give rank 0's values";
  }
  // gradients: the mean over ranks r of (r + 1)(i + 1) = (world + 1) / 2 (i + 1), in buckets of
  // 32 bytes
  const auto params = rank_parameters(rank, device);
  group.average_gradients(params, 32);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto expected =
        at::full(params[i].sizes(), (world + 1.0) / 2.0 * (static_cast<double>(i) + 1),
                 params[i].grad().options().device(at::kCPU));
    if (!at::equal(params[i].grad().cpu(), expected)) {
      return "gradient " + std::to_string(i) + " not averaged";
    }
  }
  // metric sums: of 1 + r, 0.25 and r over the ranks
  const auto sums = group.sum({1.0 + rank, 0.25, static_cast<double>(rank)});
  const double ranks_sum = world * (world - 1.0) / 2.0;
  if (sums != std::vector<double>{world + ranks_sum, 0.25 * world, ranks_sum}) {
    return "sum is wrong";
  }
  group.barrier();
  return "";
}

const c10::Device kGpu1(c10::DeviceType::CUDA, 1);

int worker_main(const char* scenario, int port) {
  try {
    if (std::strcmp(scenario, "nccl-collectives") == 0) {
      ProcessGroup group(loopback(1, port), kTimeout, DistributedBackend::Nccl, kGpu1);
      const std::string problem = run_collectives(group, kGpu1);
      if (!problem.empty()) std::fprintf(stderr, "rank 1: %s\n", problem.c_str());
      return problem.empty() ? 0 : 1;
    }
    ProcessGroup group(loopback(1, port), kTimeout);
    if (std::strcmp(scenario, "collectives") == 0) {
      const std::string problem = run_collectives(group);
      if (!problem.empty()) std::fprintf(stderr, "rank 1: %s\n", problem.c_str());
      return problem.empty() ? 0 : 1;
    }
    if (std::strcmp(scenario, "die") == 0) {
      group.barrier();
      std::_Exit(3);  // gone without a goodbye, as a crashed or killed rank is
    }
    if (std::strcmp(scenario, "hang") == 0) {
      group.barrier();
      ::sleep(60);  // alive but stuck (rank 0 kills it)
      return 0;
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank 1: %s\n", e.what());
    return 1;
  }
}

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  const auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace

TFT_TEST(launch_env_follows_torchrun) {
  using tft::distributed::launch_env_from_environment;
  g_env.clear();
  assert_false(launch_env_from_environment(fake_env).has_value());  // no launcher
  g_env = {{"WORLD_SIZE", "4"},
           {"RANK", "3"},
           {"LOCAL_RANK", "1"},
           {"MASTER_ADDR", "node0"},
           {"MASTER_PORT", "29500"}};
  const auto env = launch_env_from_environment(fake_env);
  assert_true(env.has_value());
  assert_int_equal(env->rank, 3);
  assert_int_equal(env->world_size, 4);
  assert_int_equal(env->local_rank, 1);
  assert_string_equal(env->master_addr.c_str(), "node0");
  assert_int_equal(env->master_port, 29500);

  const std::vector<std::pair<std::map<std::string, std::string>, const char*>> bad = {
      {{{"RANK", "4"}}, "RANK=\"4\": expected a whole number from 0 to 3 (below WORLD_SIZE=4)"},
      {{{"RANK", "-1"}}, "RANK=\"-1\""},
      {{{"LOCAL_RANK", "x"}}, "LOCAL_RANK=\"x\""},
      {{{"MASTER_PORT", "70000"}},
       "MASTER_PORT=\"70000\": expected a whole number from 1 to 65535"},
      {{{"WORLD_SIZE", "0"}}, "WORLD_SIZE=\"0\""},
      {{{"MASTER_ADDR", ""}}, "MASTER_ADDR is not"},
  };
  for (const auto& [change, message] : bad) {
    g_env = {
        {"WORLD_SIZE", "4"}, {"RANK", "3"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}};
    for (const auto& [key, value] : change) g_env[key] = value;
    TFT_ASSERT_THROWS_WITH(launch_env_from_environment(fake_env), tft::ConfigError, message);
  }
  g_env = {{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}};
  TFT_ASSERT_THROWS_WITH(launch_env_from_environment(fake_env), tft::ConfigError,
                         "WORLD_SIZE=2 is set but RANK is not");
}

TFT_TEST(two_ranks_broadcast_average_and_sum) {
  const int port = tft::distributed::free_local_port();
  const pid_t worker = start_worker("collectives", port);
  std::string problem;
  {
    ProcessGroup group(loopback(0, port), kTimeout);
    problem = run_collectives(group);
  }
  const int worker_status = wait_worker(worker);
  if (!problem.empty()) fail_msg("rank 0: %s", problem.c_str());
  assert_int_equal(worker_status, 0);
}

// NCCL on GPU tensors: two ranks on cuda:0 and cuda:1 where there are two GPUs; a job of one
// where there is one (NCCL refuses two ranks on one GPU), which still builds a communicator and
// runs every collective on the device.
TFT_TEST(nccl_runs_the_collectives_on_gpu_tensors) {
  if (!tft::distributed::nccl_in_build()) {
    std::printf("  skipped: this build has no NCCL (a CUDA build with TFT_WITH_NCCL)\n");
    skip();
  }
  const int gpus = tft::cuda_device_count();
  if (gpus == 0) {
    std::printf("  skipped: no CUDA device\n");
    skip();
  }
  const c10::Device gpu0(c10::DeviceType::CUDA, 0);
  const int port = tft::distributed::free_local_port();
  const int world = gpus >= 2 ? 2 : 1;
  const pid_t worker = world == 2 ? start_worker("nccl-collectives", port) : 0;
  std::string problem;
  {
    ProcessGroup group(loopback(0, port, world), kTimeout, DistributedBackend::Nccl, gpu0);
    assert_true(group.backend() == DistributedBackend::Nccl);
    problem = run_collectives(group, gpu0);
  }
  if (world == 2) assert_int_equal(wait_worker(worker), 0);
  std::printf("  NCCL: %d rank(s)\n", world);
  if (!problem.empty()) fail_msg("rank 0: %s", problem.c_str());
}

TFT_TEST(a_rank_that_dies_fails_the_others_within_the_timeout) {
  const int port = tft::distributed::free_local_port();
  const pid_t worker = start_worker("die", port);
  ProcessGroup group(loopback(0, port), kTimeout);
  group.barrier();
  assert_int_equal(wait_worker(worker), 3);
  const auto start = Clock::now();
  const auto params = rank_parameters(0);
  TFT_ASSERT_THROWS_WITH(group.average_gradients(params), tft::IoError,
                         "distributed: rank 0 of 2: gradient all-reduce failed");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("  the all-reduce failed after %.2f s (timeout %.0f s)\n", seconds,
              kTimeout.count() / 1000.0);
  assert_true(seconds < kTimeout.count() / 1000.0 + 2.0);
}

TFT_TEST(a_rank_that_hangs_fails_the_others_at_the_timeout) {
  const int port = tft::distributed::free_local_port();
  const pid_t worker = start_worker("hang", port);
  ProcessGroup group(loopback(0, port), kTimeout);
  group.barrier();
  const auto start = Clock::now();
  TFT_ASSERT_THROWS_WITH(group.sum({1.0}), tft::IoError,
                         "distributed: rank 0 of 2: metric all-reduce failed");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ::kill(worker, SIGKILL);
  wait_worker(worker);
  std::printf("  the all-reduce gave up after %.2f s (timeout %.0f s)\n", seconds,
              kTimeout.count() / 1000.0);
  assert_true(seconds >= kTimeout.count() / 1000.0 - 0.5);
  assert_true(seconds < kTimeout.count() / 1000.0 + 2.0);
}

TFT_TEST(a_rank_that_never_comes_fails_the_join_within_the_timeout) {
  const auto start = Clock::now();
  const int port = tft::distributed::free_local_port();
  TFT_ASSERT_THROWS_WITH(ProcessGroup(loopback(0, port), std::chrono::milliseconds(1500)),
                         tft::IoError,
                         "distributed: rank 0 of 2 could not join the job at 127.0.0.1:");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  assert_true(seconds < 1.5 + 3.0);
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--worker") == 0) {
    return worker_main(argv[2], std::atoi(argv[3]));
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(launch_env_follows_torchrun),
      cmocka_unit_test(two_ranks_broadcast_average_and_sum),
      cmocka_unit_test(nccl_runs_the_collectives_on_gpu_tensors),
      cmocka_unit_test(a_rank_that_dies_fails_the_others_within_the_timeout),
      cmocka_unit_test(a_rank_that_hangs_fails_the_others_at_the_timeout),
      cmocka_unit_test(a_rank_that_never_comes_fails_the_join_within_the_timeout),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
