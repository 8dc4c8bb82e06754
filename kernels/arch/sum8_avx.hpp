// Eight 8-lane float vectors combined each (summed, or their largest lane),
// into one vector (lane p: vector p's result), with one tree instead of
// eight. A step pairs neighbouring lanes as hadd does (a0 + a1, a2 + a3, b0
// + b1, b2 + b3 in each 128-bit half), with any combining operation.
#pragma once

#include <immintrin.h>

namespace kiln::kernels::arch {

template <class Combine>
__m256 combine_pairs(__m256 a, __m256 b, Combine op) {
  return op(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

template <class Combine>
__m256 combine_each8(const __m256* acc, Combine op) {
  const __m256 s01 = combine_pairs(acc[0], acc[1], op), s23 = combine_pairs(acc[2], acc[3], op);
  const __m256 s45 = combine_pairs(acc[4], acc[5], op), s67 = combine_pairs(acc[6], acc[7], op);
  const __m256 s0123 = combine_pairs(s01, s23, op), s4567 = combine_pairs(s45, s67, op);
  return op(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

inline __m256 sum_each8(const __m256* acc) {
  return combine_each8(acc, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); });
}

inline __m256 max_each8(const __m256* acc) {
  return combine_each8(acc, [](__m256 a, __m256 b) { return _mm256_max_ps(a, b); });
}

}  // namespace kiln::kernels::arch
