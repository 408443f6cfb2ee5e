#include "common/cpu_share.h"

#include "common/cgroup.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace tft {
namespace {

namespace fs = std::filesystem;

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  return std::max(1, CPU_COUNT(&set));
}

// "QUOTA PERIOD" (v2 cpu.max) or two files (v1): CPUs, or nothing for "max" / -1 / unreadable.
std::optional<double> quota_of(const std::string& quota, const std::string& period) {
  if (quota == "max") return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  if (end == quota.c_str() || q <= 0) return std::nullopt;
  const double p = std::strtod(period.c_str(), &end);
  if (end == period.c_str() || p <= 0) return std::nullopt;
  return q / p;
}

struct Quota {
  double cpus;
  std::string detail;
};

void keep_tighter(std::optional<Quota>& tightest, std::optional<double> cpus,
                  const std::string& detail) {
  if (cpus && (!tightest || *cpus < tightest->cpus)) tightest = Quota{*cpus, detail};
}

std::optional<Quota> tightest_quota(const fs::path& proc_root, const fs::path& cgroup_root) {
  const cgroup::Membership groups = cgroup::membership(proc_root);
  std::optional<Quota> tightest;
  if (groups.v2) {
    for (const fs::path& level : cgroup::levels(cgroup_root, *groups.v2)) {
      const auto line = cgroup::first_line(level / "cpu.max");
      if (!line) continue;
      std::istringstream fields(*line);
      std::string quota, period;
      fields >> quota >> period;
      keep_tighter(tightest, quota_of(quota, period),
                   "cpu.max " + *line + " (" + level.string() + ")");
    }
  }
  const auto v1 = groups.v1.find("cpu");
  if (v1 != groups.v1.end()) {
    // The cpu controller is mounted alone or together with cpuacct.
    for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"}) {
      if (!fs::exists(cgroup_root / mount)) continue;
      for (const fs::path& level : cgroup::levels(cgroup_root / mount, v1->second)) {
        const auto quota = cgroup::first_line(level / "cpu.cfs_quota_us");
        const auto period = cgroup::first_line(level / "cpu.cfs_period_us");
        if (!quota || !period) continue;
        keep_tighter(tightest, quota_of(*quota, *period),
                     "cpu.cfs_quota_us " + *quota + " / cpu.cfs_period_us " + *period + " (" +
                         level.string() + ")");
      }
      break;
    }
  }
  return tightest;
}

// procs_running of /proc/stat: runnable threads on the whole machine, the reader included.
std::optional<int> procs_running(const fs::path& proc_root) {
  std::ifstream in(proc_root / "stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("procs_running ", 0) == 0) return std::atoi(line.c_str() + 14);
  }
  return std::nullopt;
}

// This process's threads in state R ("pid (name) R ..."; the name may hold spaces or parens).
int own_running(const fs::path& proc_root) {
  int running = 0;
  std::error_code error;
  for (const auto& task : fs::directory_iterator(proc_root / "self" / "task", error)) {
    const auto line = cgroup::first_line(task.path() / "stat");
    if (!line) continue;
    const auto close = line->rfind(')');
    if (close != std::string::npos && close + 2 < line->size() && (*line)[close + 2] == 'R') {
      ++running;
    }
  }
  return running;
}

}  // namespace

int CpuShare::usable_cpus() const {
  if (!quota_cpus) return affinity_cpus;
  return std::max(1, std::min(affinity_cpus, static_cast<int>(std::ceil(*quota_cpus - 1e-9))));
}

int CpuShare::free_cpus() const { return std::max(1, usable_cpus() - others_running); }

std::string CpuShare::describe() const {
  char quota[64] = "no quota";
  if (quota_cpus) std::snprintf(quota, sizeof(quota), "quota %.2f CPUs", *quota_cpus);
  return std::to_string(free_cpus()) + " of " + std::to_string(usable_cpus()) +
         " CPUs free (affinity " + std::to_string(affinity_cpus) + ", " + quota + ", " +
         std::to_string(others_running) + " other threads running)";
}

CpuShare cpu_share(const CpuShareSources& sources) {
  const fs::path proc_root(sources.proc_root);
  CpuShare share;
  share.affinity_cpus = sources.affinity_cpus.value_or(affinity_cpus());
  if (auto quota = tightest_quota(proc_root, sources.cgroup_root)) {
    share.quota_cpus = quota->cpus;
    share.quota_detail = std::move(quota->detail);
  }
  std::vector<int> others;
  for (int i = 0; i < std::max(1, sources.reads); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto running = procs_running(proc_root);
    if (!running) break;
    others.push_back(std::max(0, *running - own_running(proc_root)));
  }
  if (!others.empty()) {
    std::nth_element(others.begin(), others.begin() + others.size() / 2, others.end());
    share.others_running = others[others.size() / 2];
  }
  return share;
}

}  // namespace tft
