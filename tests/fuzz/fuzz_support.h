// What the fuzz harnesses share: the input as text, and how a harness reports a broken
// contract that is not a crash by itself (a config that does not read back equal, a loader
// that throws something other than its documented error types).
//
// Findings are crashes on purpose: libFuzzer (and replay_main.cpp in the normal build) saves
// or fails on a crash, and nothing else. An exception that escapes a harness is a finding too:
// the library promises tft::Error subclasses only (common/error.h), which the C API maps to
// status codes; anything else reaches a C caller as "internal error".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tft::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Prints what broke and aborts, so libFuzzer keeps the input as a crash.
[[noreturn]] inline void broken_contract(const std::string& what) {
  std::fprintf(stderr, "broken contract: %s\n", what.c_str());
  std::abort();
}

}  // namespace tft::fuzz
