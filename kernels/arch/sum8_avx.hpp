// Eight 8-lane float vectors summed each, into one vector (lane p: the sum
// of acc[p]'s lanes), with one horizontal-add tree instead of eight.
#pragma once

#include <immintrin.h>

namespace kiln::kernels::arch {

inline __m256 sum_each8(const __m256* acc) {
  const __m256 s01 = _mm256_hadd_ps(acc[0], acc[1]), s23 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 s45 = _mm256_hadd_ps(acc[4], acc[5]), s67 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

}  // namespace kiln::kernels::arch
