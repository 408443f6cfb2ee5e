// This machine's matrix-product peak, measured in the same run as the steps it is set against:
// a square n x n x n product (2*n^3 flops) in one dtype, on the current intra-op thread count,
// the best of a few repeats. n doubles from 256 until one product takes an eighth of the
// target time (or n reaches the cap), so that a slow dtype (bfloat16 on a CPU without native
// support) does not take minutes and a fast one (a GPU) is not measured on a toy size.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

namespace tft::bench {

struct GemmPeak {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::int64_t size = 0;  // n
  double seconds = 0;     // best time of one product
  double gflops_per_second() const {
    return seconds > 0 ? 2.0 * static_cast<double>(size) * static_cast<double>(size) *
                             static_cast<double>(size) / seconds / 1e9
                       : 0;
  }
};

// Each of `repeats` trials times as many back-to-back products as fill about `target_seconds`
// (at least one), between device synchronisations.
GemmPeak measure_gemm_peak(c10::ScalarType dtype, c10::Device device, double target_seconds = 0.5,
                           int repeats = 3);

}  // namespace tft::bench
