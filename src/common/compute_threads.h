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
#pragma once

namespace tft {

// LibTorch's intra-op threads to `threads` (0: LibTorch's default, one per core), and a BLAS
// library with a pool of its own (OpenBLAS, BLIS; looked up at run time) to one thread.
void set_compute_threads(int threads);

}  // namespace tft
