// The process's address space now (VmSize in /proc/self/status, in bytes; 0 when unreadable):
// what RLIMIT_AS limits, for tests that set that limit a little above it.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace tft::testing {

inline std::int64_t address_space_in_use() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      std::int64_t kilobytes = 0;
      status >> kilobytes;
      return kilobytes * 1024;
    }
  }
  return 0;
}

}  // namespace tft::testing
