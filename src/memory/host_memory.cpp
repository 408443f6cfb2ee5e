#include "memory/host_memory.h"

#include "common/cgroup.h"
#include "common/error.h"
#include "common/format.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

namespace tft::memory {
namespace {

namespace fs = std::filesystem;

// cgroup v1 writes "no limit" as the largest page-aligned 64-bit value; anything from 2^62 up
// is that in practice.
constexpr std::int64_t kUnlimitedFrom = std::int64_t{1} << 62;

std::optional<std::int64_t> parse_bytes(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// A "Key:   1234 kB" line of /proc/meminfo or /proc/self/status, in bytes.
std::optional<std::int64_t> proc_kilobytes(const fs::path& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() ||
        line[key.size()] != ':') {
      continue;
    }
    std::istringstream fields(line.substr(key.size() + 1));
    std::int64_t kilobytes = 0;
    if (fields >> kilobytes && kilobytes >= 0) return kilobytes * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

// The tightest limit along `group` and its ancestors, up to and including `mount`: each
// level's limit file less its usage file. A level whose files are missing is skipped (the
// root of a hierarchy has none; a container may see only part of the tree).
std::optional<HostMemoryLimit> tightest_cgroup(const fs::path& mount, const std::string& group,
                                               const char* limit_file, const char* usage_file) {
  std::optional<HostMemoryLimit> tightest;
  for (const fs::path& level : cgroup::levels(mount, group)) {
    const auto limit_text = cgroup::first_line(level / limit_file);
    const auto usage_text = cgroup::first_line(level / usage_file);
    if (!limit_text || !usage_text || *limit_text == "max") continue;
    const auto limit = parse_bytes(*limit_text);
    const auto usage = parse_bytes(*usage_text);
    if (!limit || !usage || *limit >= kUnlimitedFrom) continue;
    const std::int64_t available = *limit - *usage;
    if (!tightest || available < tightest->available_bytes) {
      tightest = HostMemoryLimit{"cgroup", available,
                                 std::string(limit_file) + " " + format_bytes(*limit) + " - " +
                                     usage_file + " " + format_bytes(*usage) + " (" +
                                     level.string() + ")"};
    }
  }
  return tightest;
}

}  // namespace

const HostMemoryLimit& HostMemory::tightest() const {
  if (limits.empty()) {
    throw InvalidArgumentError(
        "host memory: no limit could be read (no cgroup limit, no RLIMIT_AS, no MemAvailable)");
  }
  return *std::min_element(limits.begin(), limits.end(), [](const auto& a, const auto& b) {
    return a.available_bytes < b.available_bytes;
  });
}

HostMemory host_memory(const HostMemorySources& sources) {
  HostMemory memory;
  const fs::path proc_root(sources.proc_root), cgroup_root(sources.cgroup_root);

  const cgroup::Membership groups = cgroup::membership(proc_root);
  std::optional<HostMemoryLimit> cgroup;
  if (groups.v2) {
    cgroup = tightest_cgroup(cgroup_root, *groups.v2, "memory.max", "memory.current");
  }
  if (const auto v1_memory = groups.v1.find("memory"); v1_memory != groups.v1.end()) {
    auto v1 = tightest_cgroup(cgroup_root / "memory", v1_memory->second, "memory.limit_in_bytes",
                              "memory.usage_in_bytes");
    if (v1 && (!cgroup || v1->available_bytes < cgroup->available_bytes)) cgroup = std::move(v1);
  }
  if (cgroup) memory.limits.push_back(std::move(*cgroup));

  if (sources.read_rlimit) {
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const auto in_use = proc_kilobytes(proc_root / "self" / "status", "VmSize");
      if (in_use) {
        const auto bytes = static_cast<std::int64_t>(
            std::min<rlim_t>(limit.rlim_cur, static_cast<rlim_t>(kUnlimitedFrom)));
        memory.limits.push_back(HostMemoryLimit{
            "RLIMIT_AS", bytes - *in_use,
            "limit " + format_bytes(bytes) + " - address space in use " + format_bytes(*in_use)});
      }
    }
  }

  if (const auto available = proc_kilobytes(proc_root / "meminfo", "MemAvailable")) {
    memory.limits.push_back(HostMemoryLimit{"MemAvailable", *available, format_bytes(*available)});
  }
  return memory;
}

}  // namespace tft::memory
