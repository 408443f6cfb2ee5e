#include "gemm_peak.h"

#include "common/device.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tft::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds per product over `count` back-to-back products.
double time_products(const at::Tensor& a, const at::Tensor& b, at::Tensor& c, int count,
                     c10::Device device) {
  synchronize(device);
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) at::mm_out(c, a, b);
  synchronize(device);
  return std::chrono::duration<double>(Clock::now() - start).count() / count;
}

}  // namespace

GemmPeak measure_gemm_peak(c10::ScalarType dtype, c10::Device device, double target_seconds,
                           int repeats) {
  const c10::NoGradGuard no_grad;
  const std::int64_t max_size = device.is_cuda() ? 16384 : 8192;
  const auto options = at::TensorOptions().device(device);
  at::Tensor a, b, c;
  GemmPeak peak;
  peak.dtype = dtype;
  for (std::int64_t n = 256;; n *= 2) {
    a = at::randn({n, n}, options).to(dtype);
    b = at::randn({n, n}, options).to(dtype);
    c = at::empty({n, n}, options.dtype(dtype));
    time_products(a, b, c, 1, device);  // warm-up: first-call set-up, page faults
    peak.size = n;
    peak.seconds = time_products(a, b, c, 1, device);
    if (peak.seconds >= target_seconds / 8 || n >= max_size) break;
  }
  const int count = static_cast<int>(
      std::clamp(std::ceil(target_seconds / std::max(peak.seconds, 1e-9)), 1.0, 10000.0));
  for (int trial = 0; trial < repeats; ++trial) {
    peak.seconds = std::min(peak.seconds, time_products(a, b, c, count, device));
  }
  return peak;
}

}  // namespace tft::bench
