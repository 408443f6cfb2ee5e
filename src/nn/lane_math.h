// Row arithmetic that the compiler turns into vector instructions (nn/ kernels, built with -O3
// and without contraction, src/nn/CMakeLists.txt): an exp without a library call, and sums taken
// in kLanes interleaved partial sums, the same fixed order whatever the vector width, so a sum
// gives the same bits on every machine and for every thread count.
//
// A sum over j in plain order cannot be vectorised without reordering it (which the compiler
// does only under -ffast-math), and std::exp is a call per element: the two kept the fused gate,
// add and norm at 4x the unfused ATen operators' time (tft-kernel-bench).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

namespace tft::lanes {

constexpr std::int64_t kLanes = 16;

// e^x in float32 within 2 ulp (Cephes' expf: x = n ln 2 + r, |r| <= ln 2 / 2, a degree-6
// polynomial in r, times 2^n built in the exponent bits). x is clamped to [-87, 88], where 2^n
// stays a normal float: below, the result is about 1.6e-38 instead of smaller. NaN stays NaN.
inline float exp(float x) {
  x = x > 88.0f ? 88.0f : x;
  x = x < -87.0f ? -87.0f : x;
  // x / ln 2 rounded to the nearest integer n, which lands in the low bits of t.
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  const float t = x * 1.44269504088896341f + kRound;
  const float n = t - kRound;
  // r = x - n ln 2, ln 2 in two parts so that n * the first part is exact.
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // (__builtin_bit_cast: std::bit_cast is C++20, and the Debian LibTorch 1.13 build is C++17.)
  const std::int32_t biased = (__builtin_bit_cast(std::int32_t, t) - 0x4B400000 + 127) << 23;
  return p * __builtin_bit_cast(float, biased);
}

// Double precision stays exact (the gradient checks run in double).
inline double exp(double x) { return std::exp(x); }

template <typename Acc>
Acc sigmoid(Acc v) {
  return Acc(1) / (Acc(1) + lanes::exp(-v));
}

// The kLanes partial sums added up in a fixed tree.
template <typename Acc>
Acc add_up(Acc* part) {
  for (std::int64_t half = kLanes / 2; half > 0; half /= 2) {
    for (std::int64_t k = 0; k < half; ++k) part[k] += part[k + half];
  }
  return part[0];
}

// The sum of term(j) over j < n: term(j) goes to partial sum j % kLanes.
template <typename Acc, typename Term>
Acc sum(std::int64_t n, Term&& term) {
  Acc part[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (std::int64_t k = 0; k < kLanes; ++k) part[k] += term(j + k);
  }
  for (std::int64_t k = 0; j + k < n; ++k) part[k] += term(j + k);
  return add_up(part);
}

// A value in the type it is computed in (float for bfloat16 and half), and back, rounded to
// nearest even. bfloat16 in integer arithmetic without a branch (NaN to the quiet NaN 0x7FC0),
// the bits c10::BFloat16's own conversions give, so that loops over it vectorise; c10's
// conversion tests for NaN with a branch, which keeps such a loop scalar. Half keeps c10's.
inline float widen(c10::BFloat16 v) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(v.x) << 16);
}
inline float widen(c10::Half v) { return static_cast<float>(v); }
inline float widen(float v) { return v; }
inline double widen(double v) { return v; }

template <typename T, typename W>
T narrow(W v) {
  if constexpr (std::is_same_v<T, c10::BFloat16>) {
    const std::uint32_t u = __builtin_bit_cast(std::uint32_t, v);
    const auto rounded = static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    return c10::BFloat16(v != v ? std::uint16_t{0x7FC0} : rounded, c10::BFloat16::from_bits());
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace tft::lanes
