#include "common/compute_threads.h"

#include "common/cpu_share.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace tft {

ComputeThreads set_compute_threads(int configured) {
  ComputeThreads result;
  result.configured = configured;
  const CpuShare share = cpu_share();
  if (configured > 0) {
    result.threads = configured;
    result.reason = "configured";
    if (configured > share.free_cpus()) {
      result.warning = "training.threads " + std::to_string(configured) + " with " +
                       share.describe() +
                       ": OpenMP's threads spin-wait for CPUs other work holds, which can slow "
                       "each step several times over; threads: 0 takes the CPUs free";
    }
  } else {
    result.threads = share.free_cpus();
    result.reason = "auto: " + share.describe();
  }
  at::set_num_threads(result.threads);
  // Looked up in what the process has loaded: no link-time dependency on one BLAS, and
  // nothing to do with MKL (sized by at::set_num_threads) or without a BLAS of its own.
  using SetThreads = void (*)(int);
  for (const char* name : {"openblas_set_num_threads", "bli_thread_set_num_threads"}) {
    if (void* symbol = ::dlsym(RTLD_DEFAULT, name)) reinterpret_cast<SetThreads>(symbol)(1);
  }
  return result;
}

}  // namespace tft
