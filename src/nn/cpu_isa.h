// Which vector instruction set the nn/ kernels use. They are built for the target's baseline
// (SSE2 on x86-64) and, on x86-64, once more with AVX2 on the functions that need it
// (__attribute__((target("avx2"))), never a whole file), chosen at run time: the same library
// runs on every x86-64 machine and uses 8-wide vectors where there are.
//
// Every variant gives the same bits: the kernels sum in a fixed order of lanes (lane_math.h) and
// are built without contraction into fused multiply-adds (src/nn/CMakeLists.txt), so the choice
// changes the time, never a result (test_cpu_kernels checks it).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFT_CPU_X86 1
#endif

namespace tft {

enum class CpuIsa {
  kBaseline,  // what every machine of the target runs
  kAvx2,      // x86-64 with AVX2
};

const char* to_string(CpuIsa isa);

// The instruction set a kernel called on this thread uses: AVX2 where the CPU has it, unless
// TFT_CPU_ISA=baseline is in the environment (read once) or a ScopedCpuIsa on this thread asks
// for the baseline. A kernel decides on the calling thread, before it splits its work.
CpuIsa cpu_isa();

// For this thread and scope, the kernels use `isa`, or the baseline where the CPU lacks it (tests
// and tft-kernel-bench compare the variants in one process).
class ScopedCpuIsa {
 public:
  explicit ScopedCpuIsa(CpuIsa isa);
  ~ScopedCpuIsa();
  ScopedCpuIsa(const ScopedCpuIsa&) = delete;
  ScopedCpuIsa& operator=(const ScopedCpuIsa&) = delete;

 private:
  int previous_;
};

}  // namespace tft
