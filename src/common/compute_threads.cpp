#include "common/compute_threads.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

namespace tft {

void set_compute_threads(int threads) {
  if (threads > 0) at::set_num_threads(threads);
  // Looked up in what the process has loaded: no link-time dependency on one BLAS, and
  // nothing to do with MKL (sized by at::set_num_threads) or without a BLAS of its own.
  using SetThreads = void (*)(int);
  for (const char* name : {"openblas_set_num_threads", "bli_thread_set_num_threads"}) {
    if (void* symbol = ::dlsym(RTLD_DEFAULT, name)) reinterpret_cast<SetThreads>(symbol)(1);
  }
}

}  // namespace tft
