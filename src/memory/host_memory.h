// How much more memory this process may take on the host, for checkpoint.memory_budget: auto
// on the CPU (planning/budget_request.h). A library inside someone else's process meets the
// host's limits, not the machine's, so every limit that applies is read and the tightest wins:
//
//   cgroup     the memory limit of the process's cgroup and of every ancestor, less what each
//              holds now: v2's memory.max - memory.current, or v1's memory.limit_in_bytes -
//              memory.usage_in_bytes (what a container's memory limit is)
//   RLIMIT_AS  the soft address-space limit less the address space in use (VmSize): what a
//              host's own guard, or `ulimit -v`, gives
//   MemAvailable  the kernel's estimate of memory available without swapping (/proc/meminfo)
//
// A limit that is absent, unlimited or unreadable is left out; MemAvailable is always there on
// Linux. Paths are parameters so tests can point them at a made-up tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tft::memory {

struct HostMemoryLimit {
  std::string name;                  // "cgroup", "RLIMIT_AS", "MemAvailable"
  std::int64_t available_bytes = 0;  // may be <= 0 when the process is at or over it
  std::string detail;                // e.g. "memory.max 2.00 GiB - memory.current 512.0 MiB
                                     // (/sys/fs/cgroup/job)"
};

struct HostMemory {
  std::vector<HostMemoryLimit> limits;  // every limit that applies, in the order above

  // The limit with the least available; InvalidArgumentError when there is none.
  const HostMemoryLimit& tightest() const;
};

struct HostMemorySources {
  std::string proc_root = "/proc";             // self/cgroup, self/status, meminfo
  std::string cgroup_root = "/sys/fs/cgroup";  // v2 there, v1's memory controller in memory/
  bool read_rlimit = true;                     // getrlimit(RLIMIT_AS)
};

HostMemory host_memory(const HostMemorySources& sources = {});

}  // namespace tft::memory
