// The process's compute threads: LibTorch's intra-op pool, and the BLAS library's own.
//
// at::set_num_threads sizes LibTorch's OpenMP pool (and MKL's, in builds with MKL, such as
// the PyPI wheel). An OpenBLAS built with pthreads (Debian's default libopenblas0-pthread,
// under Debian's LibTorch) keeps a pool of its own, one thread per core, for every matrix
// product, while the OpenMP threads spin-wait between parallel regions: the two fight for the
// cores. Measured on Debian's LibTorch 1.13, 2 cores, sp500.yaml, 2 epochs: 8.8 s with one
// intra-op thread and 21.1 s with two while OpenBLAS kept its default pool; 8.8 s and 8.0 s
// with OpenBLAS on one thread. So the BLAS pool gets one thread and LibTorch's pool does the
// parallel work. (Not measured on many cores, where large products might want BLAS threads.)
//
// training.threads: 0 (auto) takes the CPUs free now (common/cpu_share.h): a pool larger than
// the CPUs other processes leave free spin-waits for them.
#pragma once

#include <string>

namespace tft {

struct ComputeThreads {
  int configured = 0;   // training.threads (0: auto)
  int threads = 1;      // the intra-op threads set
  std::string reason;   // "configured", or auto's reading of the machine (CpuShare::describe)
  std::string warning;  // empty, or why the configured pool oversubscribes the CPUs free
};

// LibTorch's intra-op threads to `configured`, or with 0 to the CPUs free now, at least one; a
// BLAS library with a pool of its own (OpenBLAS, BLIS; looked up at run time) to one thread.
ComputeThreads set_compute_threads(int configured);

}  // namespace tft
