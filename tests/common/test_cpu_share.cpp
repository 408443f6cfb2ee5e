// The CPUs a process may use and how many are free (common/cpu_share.h), for training.threads:
// 0: cgroup v2 and v1 CPU quotas along the process's cgroup and its ancestors, the affinity
// mask, other processes' running threads from /proc/stat less this process's own; on made-up
// /proc and /sys/fs/cgroup trees, and once on this machine.
#include "common/compute_threads.h"
#include "common/cpu_share.h"

#include <ATen/Parallel.h>

#include <filesystem>
#include <string>

#include "support/test_files.h"
#include "support/cmocka_cpp.h"  // last: see the header

using tft::testing::scratch_dir;
using tft::testing::write_text;

namespace {

namespace fs = std::filesystem;

// A made-up /proc (stat, self/cgroup, self/task) and /sys/fs/cgroup under `root`.
struct FakeHost {
  fs::path root;
  explicit FakeHost(const std::string& name) : root(scratch_dir(name)) {
    fs::create_directories(root / "proc" / "self" / "task");
    fs::create_directories(root / "cgroup");
  }
  ~FakeHost() { fs::remove_all(root); }
  void file(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root / relative).parent_path());
    write_text(root / relative, text);
  }
  // procs_running in /proc/stat, and this process's threads with their states.
  void running(int procs_running, const std::string& own_states) const {
    file("proc/stat", "cpu  1 2 3 4 5 6 7 0 0 0\nprocs_running " + std::to_string(procs_running) +
                          "\nprocs_blocked 0\n");
    fs::remove_all(root / "proc" / "self" / "task");
    for (std::size_t i = 0; i < own_states.size(); ++i) {
      // A name with a space and a parenthesis, as /proc allows.
      file("proc/self/task/" + std::to_string(100 + i) + "/stat",
           std::to_string(100 + i) + " (tft (worker) x) " + own_states[i] + " 1 100 100 0\n");
    }
  }
  tft::CpuShare read(int affinity) const {
    tft::CpuShareSources sources;
    sources.proc_root = (root / "proc").string();
    sources.cgroup_root = (root / "cgroup").string();
    sources.affinity_cpus = affinity;
    sources.reads = 3;
    return tft::cpu_share(sources);
  }
};

// A v2 quota on an ancestor tighter than the group's own: the tightest wins, rounded up.
TFT_TEST(v2_quota_along_the_ancestors) {
  const FakeHost host("cpu_share_v2");
  host.file("proc/self/cgroup", "0::/job/task\n");
  host.file("cgroup/job/task/cpu.max", "max 100000\n");
  host.file("cgroup/job/cpu.max", "150000 100000\n");
  host.running(1, "R");
  const tft::CpuShare share = host.read(8);
  assert_true(share.quota_cpus.has_value());
  assert_true(*share.quota_cpus == 1.5);
  assert_int_equal(share.usable_cpus(), 2);
  assert_int_equal(share.others_running, 0);
  assert_int_equal(share.free_cpus(), 2);
  assert_true(share.quota_detail.find("cpu.max 150000 100000") != std::string::npos);
}

// v1's cpu,cpuacct mount: cfs_quota_us -1 is no quota; a level with one is.
TFT_TEST(v1_quota_in_the_cpu_controller) {
  const FakeHost host("cpu_share_v1");
  host.file("proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n");
  host.file("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  host.file("cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  host.file("cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "300000\n");
  host.file("cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  host.running(1, "R");
  const tft::CpuShare share = host.read(16);
  assert_true(share.quota_cpus && *share.quota_cpus == 3.0);
  assert_int_equal(share.usable_cpus(), 3);
}

// Other processes' running threads: procs_running less this process's own running threads
// (sleeping ones do not count); never fewer than one CPU free.
TFT_TEST(other_running_threads_take_cpus) {
  const FakeHost host("cpu_share_others");
  host.file("proc/self/cgroup", "0::/\n");
  host.running(3, "RSR");  // this process: 2 running, 1 sleeping; 1 other running
  tft::CpuShare share = host.read(2);
  assert_false(share.quota_cpus.has_value());
  assert_int_equal(share.others_running, 1);
  assert_int_equal(share.free_cpus(), 1);
  assert_true(share.describe() ==
              "1 of 2 CPUs free (affinity 2, no quota, 1 other threads running)");
  host.running(9, "R");
  share = host.read(2);
  assert_int_equal(share.others_running, 8);
  assert_int_equal(share.free_cpus(), 1);
}

// Nothing readable: no quota, nobody else counted, the affinity mask alone.
TFT_TEST(missing_files_leave_the_affinity_mask) {
  const FakeHost host("cpu_share_missing");
  const tft::CpuShare share = host.read(4);
  assert_false(share.quota_cpus.has_value());
  assert_int_equal(share.others_running, 0);
  assert_int_equal(share.free_cpus(), 4);
}

// This machine: auto sets between 1 and the usable CPUs; a configured number is kept, with a
// warning when it exceeds the CPUs free.
TFT_TEST(auto_threads_on_this_machine) {
  const int before = at::get_num_threads();
  const tft::CpuShare share = tft::cpu_share();
  assert_true(share.affinity_cpus >= 1);
  const tft::ComputeThreads chosen = tft::set_compute_threads(0);
  std::printf("# %d threads (%s)\n", chosen.threads, chosen.reason.c_str());
  assert_true(chosen.threads >= 1 && chosen.threads <= share.usable_cpus());
  assert_int_equal(at::get_num_threads(), chosen.threads);
  assert_true(chosen.warning.empty());
  const tft::ComputeThreads many = tft::set_compute_threads(share.usable_cpus() + 7);
  assert_int_equal(many.threads, share.usable_cpus() + 7);
  assert_true(many.reason == "configured");
  assert_true(many.warning.find("spin-wait") != std::string::npos);
  at::set_num_threads(before);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v2_quota_along_the_ancestors),
      cmocka_unit_test(v1_quota_in_the_cpu_controller),
      cmocka_unit_test(other_running_threads_take_cpus),
      cmocka_unit_test(missing_files_leave_the_affinity_mask),
      cmocka_unit_test(auto_threads_on_this_machine),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
