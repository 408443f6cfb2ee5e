// How many compute threads this process should run now, for training.threads: 0 (auto).
//
// A library inside a host shares the machine. LibTorch's CPU pool is OpenMP, whose threads
// spin-wait at every barrier (libgomp's default: about 300,000 spins before sleeping), which a
// library cannot change after libgomp has loaded. When the pool has more threads than there are
// CPUs free, a thread that loses its CPU holds the others spinning at the next barrier: beside
// one CPU-bound neighbour on 2 cores, a run with 2 threads took 4.3x its time alone and one with
// 1 thread 1.0x (issue 43). So auto asks for no more threads than there are CPUs free:
//
//   affinity  the CPUs in the process's affinity mask (taskset, a container's cpuset)
//   quota     the tightest CPU quota along the process's cgroups: v2's cpu.max ("QUOTA
//             PERIOD"), v1's cpu.cfs_quota_us / cpu.cfs_period_us, in CPUs, rounded up
//   others    threads of other processes running now: /proc/stat's procs_running less this
//             process's own running threads (/proc/self/task/*/stat), the median of a few reads
//
// threads = max(1, min(affinity, quota) - others). It reads the machine as it is when asked; a
// trainer asks again at every epoch (train/training_run.cpp). Paths are parameters so tests can
// point them at a made-up tree.
#pragma once

#include <optional>
#include <string>

namespace tft {

struct CpuShareSources {
  std::string proc_root = "/proc";  // stat, self/cgroup, self/task
  std::string cgroup_root =
      "/sys/fs/cgroup";              // v2 there, v1's cpu controller in cpu/ or cpu,cpuacct/
  std::optional<int> affinity_cpus;  // tests: instead of sched_getaffinity
  int reads = 5;                     // procs_running reads, 1 ms apart
};

struct CpuShare {
  int affinity_cpus = 1;
  std::optional<double> quota_cpus;  // none: no quota along the cgroups
  std::string quota_detail;          // e.g. "cpu.max 150000 100000 (/sys/fs/cgroup/job)"
  int others_running = 0;            // other processes' threads running, median of the reads

  // min(affinity, quota rounded up).
  int usable_cpus() const;
  // max(1, usable - others).
  int free_cpus() const;
  // e.g. "2 of 2 CPUs free (affinity 2, no quota, 0 other threads running)".
  std::string describe() const;
};

CpuShare cpu_share(const CpuShareSources& sources = {});

}  // namespace tft
