#include "nn/cpu_isa.h"

#include <cstdlib>
#include <cstring>

namespace tft {

namespace {

// What the CPU and the environment allow.
CpuIsa widest_allowed() {
#ifdef TFT_CPU_X86
  static const CpuIsa widest = [] {
    const char* forced = std::getenv("TFT_CPU_ISA");
    if (forced != nullptr && std::strcmp(forced, "baseline") == 0) return CpuIsa::kBaseline;
    return __builtin_cpu_supports("avx2") ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
  }();
  return widest;
#else
  return CpuIsa::kBaseline;
#endif
}

// This thread's ScopedCpuIsa, as an int (-1: none).
thread_local int scoped_isa = -1;

}  // namespace

const char* to_string(CpuIsa isa) { return isa == CpuIsa::kAvx2 ? "avx2" : "baseline"; }

CpuIsa cpu_isa() {
  const CpuIsa widest = widest_allowed();
  if (scoped_isa < 0) return widest;
  return static_cast<CpuIsa>(scoped_isa) == CpuIsa::kBaseline ? CpuIsa::kBaseline : widest;
}

ScopedCpuIsa::ScopedCpuIsa(CpuIsa isa) : previous_(scoped_isa) {
  scoped_isa = static_cast<int>(isa);
}

ScopedCpuIsa::~ScopedCpuIsa() { scoped_isa = previous_; }

}  // namespace tft
