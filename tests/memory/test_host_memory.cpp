// The host memory a process may still take (memory/host_memory.h): cgroup v2 and v1 limits
// along the process's cgroup and its ancestors, RLIMIT_AS, MemAvailable, and the tightest of
// them; on made-up /proc and /sys/fs/cgroup trees, and RLIMIT_AS on this process itself.
#include "common/error.h"
#include "memory/host_memory.h"

#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "support/address_space.h"
#include "support/test_files.h"
#include "support/sanitizers.h"
#include "support/cmocka_cpp.h"  // last: see the header

using tft::testing::scratch_dir;
using tft::testing::write_text;

namespace {

namespace fs = std::filesystem;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// A made-up /proc (self/cgroup, meminfo) and /sys/fs/cgroup under `root`.
struct FakeHost {
  fs::path root;
  explicit FakeHost(const std::string& name) : root(scratch_dir(name)) {
    fs::create_directories(root / "proc" / "self");
    fs::create_directories(root / "cgroup");
  }
  ~FakeHost() { fs::remove_all(root); }
  void file(const fs::path& relative, const std::string& text) const {
    fs::create_directories((root / relative).parent_path());
    write_text(root / relative, text);
  }
  // A cgroup level's limit and usage files: v2's memory.max and memory.current under `level`,
  // or v1's memory.limit_in_bytes and memory.usage_in_bytes under memory/`level`.
  void v2_level(const std::string& level, const std::string& max,
                const std::string& current) const {
    file("cgroup/" + level + "/memory.max", max + "\n");
    file("cgroup/" + level + "/memory.current", current + "\n");
  }
  void v1_level(const std::string& level, const std::string& limit,
                const std::string& usage) const {
    file("cgroup/memory/" + level + "/memory.limit_in_bytes", limit + "\n");
    file("cgroup/memory/" + level + "/memory.usage_in_bytes", usage + "\n");
  }
  void process(const std::string& cgroups, std::int64_t mem_available_kb) const {
    file("proc/self/cgroup", cgroups);
    file("proc/meminfo",
         "MemTotal: 33554432 kB\nMemAvailable: " + std::to_string(mem_available_kb) + " kB\n");
  }
  tft::memory::HostMemory read() const {
    return tft::memory::host_memory(
        {(root / "proc").string(), (root / "cgroup").string(), /*read_rlimit=*/false});
  }
};

const tft::memory::HostMemoryLimit* find(const tft::memory::HostMemory& memory,
                                         const std::string& name) {
  for (const auto& limit : memory.limits) {
    if (limit.name == name) return &limit;
  }
  return nullptr;
}

}  // namespace

// v2: the tightest level wins, whether it is the process's cgroup or an ancestor, and "max"
// levels count as no limit.
TFT_TEST(cgroup_v2_takes_the_tightest_level) {
  const FakeHost host("host_memory_v2");
  host.process("0::/job/task\n", 8388608);
  host.v2_level("job", "2147483648", "1610612736");  // 2 GiB, 1.5 GiB used: 512 MiB left
  host.v2_level("job/task", "max", "1073741824");
  const tft::memory::HostMemory memory = host.read();
  assert_int_equal(memory.limits.size(), 2);
  const auto* cgroup = find(memory, "cgroup");
  assert_non_null(cgroup);
  assert_int_equal(cgroup->available_bytes, 512 * kMiB);
  assert_true(cgroup->detail.find("memory.max 2.00 GiB") != std::string::npos);
  assert_true(cgroup->detail.find("job)") != std::string::npos);
  assert_int_equal(find(memory, "MemAvailable")->available_bytes, 8192 * kMiB);
  assert_string_equal(memory.tightest().name.c_str(), "cgroup");

  // A tighter limit on the task itself wins over its parent's.
  host.v2_level("job/task", "1174405120", "1073741824");  // 1.09 GiB: 96 MiB left
  assert_int_equal(find(host.read(), "cgroup")->available_bytes, 96 * kMiB);
}

// A container sees its own cgroup as the root ("0::/") with the limit on the mount itself.
TFT_TEST(cgroup_v2_limit_at_the_mount_root) {
  const FakeHost host("host_memory_v2_root");
  host.process("0::/\n", 1048576);
  host.v2_level("", "536870912", "134217728");
  const tft::memory::HostMemory memory = host.read();
  assert_int_equal(find(memory, "cgroup")->available_bytes, 384 * kMiB);
  assert_string_equal(memory.tightest().name.c_str(), "cgroup");
}

// v1: the memory controller's hierarchy, where "no limit" is the largest page-aligned value.
TFT_TEST(cgroup_v1_memory_controller) {
  const FakeHost host("host_memory_v1");
  host.process("5:cpu,cpuacct:/\n4:memory:/svc\n0::/\n", 16777216);
  host.v1_level("", "9223372036854771712", "4294967296");
  host.v1_level("svc", "1073741824", "805306368");
  const tft::memory::HostMemory memory = host.read();
  assert_int_equal(find(memory, "cgroup")->available_bytes, 256 * kMiB);
  assert_true(find(memory, "cgroup")->detail.find("memory.limit_in_bytes") != std::string::npos);
  assert_string_equal(memory.tightest().name.c_str(), "cgroup");
}

// No cgroup limit anywhere (unlimited v1 root, a v2 mount without memory files, paths that do
// not exist under the mount): only MemAvailable. With nothing readable, tightest() says so.
TFT_TEST(no_limits_leave_mem_available_and_nothing_is_an_error) {
  const FakeHost host("host_memory_none");
  host.process("4:memory:/elsewhere/job\n0::/other\n", 2097152);
  host.v1_level("", "9223372036854771712", "1");
  host.v2_level("other", "not a number", "1");
  const tft::memory::HostMemory memory = host.read();
  assert_int_equal(memory.limits.size(), 1);
  assert_string_equal(memory.tightest().name.c_str(), "MemAvailable");
  assert_int_equal(memory.tightest().available_bytes, 2048 * kMiB);

  const FakeHost empty("host_memory_empty");
  TFT_ASSERT_THROWS_WITH(empty.read().tightest(), tft::InvalidArgumentError,
                         "no limit could be read");
}

// RLIMIT_AS on this process: its soft limit less the address space in use.
TFT_TEST(rlimit_as_counts_the_address_space_in_use) {
#ifdef TFT_UNDER_ASAN
  skip();  // ASan's shadow reserves terabytes of address space
#endif
  rlimit original{};
  assert_int_equal(getrlimit(RLIMIT_AS, &original), 0);
  const tft::memory::HostMemory before = tft::memory::host_memory();
  assert_null(find(before, "RLIMIT_AS"));  // unlimited here: not a limit
  const auto* available = find(before, "MemAvailable");
  assert_non_null(available);

  const std::int64_t in_use = tft::testing::address_space_in_use();
  assert_true(in_use > 0);
  rlimit limited = original;
  limited.rlim_cur = static_cast<rlim_t>(in_use + 1024 * kMiB);
  assert_int_equal(setrlimit(RLIMIT_AS, &limited), 0);
  const tft::memory::HostMemory after = tft::memory::host_memory();
  assert_int_equal(setrlimit(RLIMIT_AS, &original), 0);
  const auto* rlimit_as = find(after, "RLIMIT_AS");
  assert_non_null(rlimit_as);
  assert_true(rlimit_as->available_bytes <= 1024 * kMiB);
  assert_true(rlimit_as->available_bytes > 1000 * kMiB);  // reading it allocates little
  if (available->available_bytes > 1024 * kMiB) {
    assert_string_equal(after.tightest().name.c_str(), "RLIMIT_AS");
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cgroup_v2_takes_the_tightest_level),
      cmocka_unit_test(cgroup_v2_limit_at_the_mount_root),
      cmocka_unit_test(cgroup_v1_memory_controller),
      cmocka_unit_test(no_limits_leave_mem_available_and_nothing_is_an_error),
      cmocka_unit_test(rlimit_as_counts_the_address_space_in_use),
  };
  return cmocka_run_group_tests_name("host_memory", tests, nullptr, nullptr);
}
