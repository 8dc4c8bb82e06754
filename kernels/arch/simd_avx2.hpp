// Widening into 8-lane FloatVec with AVX2 and F16C.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "kernels/arch/sum8_avx.hpp"

namespace kiln::kernels::arch {

inline constexpr int kLanes = 8;
inline constexpr int kRegisters = 16;  // vector registers the compiler can allocate

inline void keep_in_register(xsimd::batch<float>& v) { asm("" : "+x"(v.data)); }

inline xsimd::batch<float> widen_f16(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline xsimd::batch<float> widen_bf16(const uint8_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

template <bool Signed>
xsimd::batch<float> widen_bytes(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(Signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes));
}

inline void narrow_f16(const float* in, uint16_t* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
}

inline xsimd::batch<float> sum_each(const xsimd::batch<float>* acc) {
  __m256 regs[8];
  for (int p = 0; p < 8; ++p) regs[p] = acc[p];
  return sum_each8(regs);
}

inline xsimd::batch<float> max_each(const xsimd::batch<float>* acc) {
  __m256 regs[8];
  for (int p = 0; p < 8; ++p) regs[p] = acc[p];
  return max_each8(regs);
}

}  // namespace kiln::kernels::arch
