// The process's control groups, as Linux's /proc/self/cgroup lists them, and the directories
// that hold a group's limits: its own and every ancestor's up to the hierarchy's mount. A limit
// set on an ancestor applies as much as one on the group itself, so readers take the tightest
// along the way (memory/host_memory.h for memory, common/cpu_share.h for CPU time).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tft::cgroup {

struct Membership {
  std::optional<std::string> v2;          // "0::/path"
  std::map<std::string, std::string> v1;  // controller ("memory", "cpu", ...) -> path
};

// Read from proc_root/self/cgroup; empty when the file is missing.
Membership membership(const std::filesystem::path& proc_root);

// mount/group, then each parent directory up to and including mount.
std::vector<std::filesystem::path> levels(const std::filesystem::path& mount,
                                          const std::string& group);

// The first line of a small file (a cgroup or /proc value), or nothing when it cannot be read.
std::optional<std::string> first_line(const std::filesystem::path& path);

}  // namespace tft::cgroup
