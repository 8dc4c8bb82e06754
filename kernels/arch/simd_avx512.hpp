// Widening into 16-lane FloatVec with AVX-512F.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace kiln::kernels::arch {

inline constexpr int kLanes = 16;
inline constexpr int kRegisters = 32;  // vector registers the compiler can allocate

inline void keep_in_register(xsimd::batch<float>& v) { asm("" : "+v"(v.data)); }

inline xsimd::batch<float> widen_f16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

inline xsimd::batch<float> widen_bf16(const uint8_t* p) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

template <bool Signed>
xsimd::batch<float> widen_bytes(const uint8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm512_cvtepi32_ps(Signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes));
}

inline void narrow_f16(const float* in, uint16_t* out) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtps_ph(_mm512_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
}

// A tree of shuffles and combining steps (add, max), all on 512-bit
// registers (about 45 instructions; the 256-bit halves and hadd took about
// 75): each step combines two vectors' halves so that the lanes holding one
// input's partial results halve, until lane 4j + s holds the result of
// vector 4s + j; one permutation then puts vector p's in lane p.
template <class Combine>
xsimd::batch<float> combine_each(const xsimd::batch<float>* acc, Combine op) {
  __m512 halves[8];  // vector 2k's 8 partial results in lanes 0-7, vector 2k+1's in lanes 8-15
  for (int k = 0; k < 8; ++k) {
    const __m512 x = acc[2 * k], y = acc[2 * k + 1];
    halves[k] =
        op(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  __m512 quarters[4];  // 128-bit quarter j: vector 4m + j's 4 partial results
  for (int m = 0; m < 4; ++m) {
    const __m512 x = halves[2 * m], y = halves[2 * m + 1];
    quarters[m] =
        op(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 1, 3, 1)));
  }
  __m512 pairs[2];  // quarter j: 2 partial results of vector 8n + j, then 2 of vector 8n + 4 + j
  for (int n = 0; n < 2; ++n) {
    const __m512d x = _mm512_castps_pd(quarters[2 * n]), y = _mm512_castps_pd(quarters[2 * n + 1]);
    pairs[n] = op(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  // Lane 4j + s: the result of vector 4s + j.
  const __m512 results = op(_mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_ps(pairs[0], pairs[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), results);
}

inline xsimd::batch<float> sum_each(const xsimd::batch<float>* acc) {
  return combine_each(acc, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
}

inline xsimd::batch<float> max_each(const xsimd::batch<float>* acc) {
  return combine_each(acc, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); });
}

}  // namespace kiln::kernels::arch
