// Widening into 16-lane FloatVec with AVX-512F.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "kernels/arch/sum8_avx.hpp"

namespace kiln::kernels::arch {

inline constexpr int kLanes = 16;
inline constexpr int kRegisters = 32;  // vector registers the compiler can allocate

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

// Each vector's two 256-bit halves added first, then two 8-way trees.
inline xsimd::batch<float> sum_each(const xsimd::batch<float>* acc) {
  __m256 halves[16];
  for (int p = 0; p < 16; ++p) {
    const __m512 a = acc[p];
    halves[p] = _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
  }
  const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(sum_each8(halves)));
  return _mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(sum_each8(halves + 8)), 1));
}

}  // namespace kiln::kernels::arch
