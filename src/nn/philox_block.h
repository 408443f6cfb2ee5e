// Philox4x32-10 over a block of consecutive counters. The numbers are exactly at::Philox4_32's:
// counter c of seed s gives the four numbers at::Philox4_32(s, /*subsequence=*/0, /*offset=*/c)
// returns first, in order. ATen's engine hands them out one call at a time, which keeps it
// scalar (about 5 ns a number here); a block runs 8 counters per AVX2 register, where the CPU
// has AVX2, and a portable loop elsewhere (tft-kernel-bench times both).
#pragma once

#include <cstdint>

#include "nn/cpu_isa.h"

#ifdef TFT_CPU_X86
#include <immintrin.h>
#endif

namespace tft::philox {

// Counters per block: 64 numbers.
constexpr int kBlockCounters = 16;
constexpr int kBlockNumbers = 4 * kBlockCounters;

namespace detail {
constexpr std::uint32_t kMulA = 0xD2511F53, kMulB = 0xCD9E8D57;
constexpr std::uint32_t kKeyA = 0x9E3779B9, kKeyB = 0xBB67AE85;
}  // namespace detail

// out[4 * k + j] = number j of counter first + k, for k < kBlockCounters. Plain C++.
inline void block_portable(std::uint64_t seed, std::uint64_t first, std::uint32_t* out) {
  using namespace detail;
  std::uint32_t c0[kBlockCounters], c1[kBlockCounters], c2[kBlockCounters], c3[kBlockCounters];
  for (int k = 0; k < kBlockCounters; ++k) {
    const std::uint64_t counter = first + static_cast<std::uint64_t>(k);
    c0[k] = static_cast<std::uint32_t>(counter);
    c1[k] = static_cast<std::uint32_t>(counter >> 32);
    c2[k] = 0;  // the subsequence
    c3[k] = 0;
  }
  std::uint32_t key0 = static_cast<std::uint32_t>(seed);
  std::uint32_t key1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < kBlockCounters; ++k) {
      const std::uint64_t a = static_cast<std::uint64_t>(kMulA) * c0[k];
      const std::uint64_t b = static_cast<std::uint64_t>(kMulB) * c2[k];
      const std::uint32_t n0 = static_cast<std::uint32_t>(b >> 32) ^ c1[k] ^ key0;
      const std::uint32_t n2 = static_cast<std::uint32_t>(a >> 32) ^ c3[k] ^ key1;
      c0[k] = n0;
      c1[k] = static_cast<std::uint32_t>(b);
      c2[k] = n2;
      c3[k] = static_cast<std::uint32_t>(a);
    }
    key0 += kKeyA;
    key1 += kKeyB;
  }
  for (int k = 0; k < kBlockCounters; ++k) {
    out[4 * k] = c0[k];
    out[4 * k + 1] = c1[k];
    out[4 * k + 2] = c2[k];
    out[4 * k + 3] = c3[k];
  }
}

#ifdef TFT_CPU_X86
namespace detail {

// The low and high 32 bits of m * c in each of 8 lanes (AVX2 multiplies the even lanes only, so
// the odd ones are shifted down, multiplied and put back).
__attribute__((target("avx2"))) inline void mulhilo8(__m256i m, __m256i c, __m256i* lo,
                                                     __m256i* hi) {
  const __m256i even = _mm256_mul_epu32(c, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

}  // namespace detail

// block_portable's numbers, 8 counters per register. Call only where cpu_isa() is kAvx2.
__attribute__((target("avx2"))) inline void block_avx2(std::uint64_t seed, std::uint64_t first,
                                                       std::uint32_t* out) {
  using namespace detail;
  const __m256i mul_a = _mm256_set1_epi32(static_cast<int>(kMulA));
  const __m256i mul_b = _mm256_set1_epi32(static_cast<int>(kMulB));
  for (int half = 0; half < kBlockCounters / 8; ++half) {
    alignas(32) std::uint32_t lo[8], hi[8];
    for (int k = 0; k < 8; ++k) {
      const std::uint64_t counter = first + static_cast<std::uint64_t>(8 * half + k);
      lo[k] = static_cast<std::uint32_t>(counter);
      hi[k] = static_cast<std::uint32_t>(counter >> 32);
    }
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    std::uint32_t key0 = static_cast<std::uint32_t>(seed);
    std::uint32_t key1 = static_cast<std::uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      __m256i lo_a, hi_a, lo_b, hi_b;
      mulhilo8(mul_a, c0, &lo_a, &hi_a);
      mulhilo8(mul_b, c2, &lo_b, &hi_b);
      const __m256i k0 = _mm256_set1_epi32(static_cast<int>(key0));
      const __m256i k1 = _mm256_set1_epi32(static_cast<int>(key1));
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi_b, c1), k0);
      c1 = lo_b;
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi_a, c3), k1);
      c3 = lo_a;
      key0 += kKeyA;
      key1 += kKeyB;
    }
    // Counters are lanes; the numbers go out counter by counter: a 4 x 8 transpose.
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1);  // c0,c1 of counters 0,1 | 4,5
    const __m256i t1 = _mm256_unpackhi_epi32(c0, c1);  // 2,3 | 6,7
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3);
    const __m256i t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2);  // counter 0 | 4
    const __m256i u1 = _mm256_unpackhi_epi64(t0, t2);  // counter 1 | 5
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3);  // counter 2 | 6
    const __m256i u3 = _mm256_unpackhi_epi64(t1, t3);  // counter 3 | 7
    __m256i* o = reinterpret_cast<__m256i*>(out + 32 * half);
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(u0, u1, 0x20));      // counters 0, 1
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));  // 2, 3
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));  // 4, 5
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));  // 6, 7
  }
}
#endif

using BlockFunction = void (*)(std::uint64_t seed, std::uint64_t first, std::uint32_t* out);

// The fastest block function this CPU runs: every one gives the same numbers.
inline BlockFunction best_block() {
#ifdef TFT_CPU_X86
  if (cpu_isa() == CpuIsa::kAvx2) return &block_avx2;
#endif
  return &block_portable;
}

}  // namespace tft::philox
