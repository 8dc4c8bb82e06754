// Reading elements of one weight row, whatever its type, as floats. Both
// accessors produce the same value for an element (the SIMD path is just a
// faster way to get it), so dequantize_row and matmul agree bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln::kernels {

using FloatVec = xsimd::batch<float>;

template <TensorType T>
struct WeightRow;

// Fallback for load(): fills the lanes one at a time with at().
// The k-th 16-bit value of a row of half-width floats (F16 or BF16 bits).
inline uint16_t half_bits_at(const uint8_t* row, int64_t k) {
  uint16_t h;
  std::memcpy(&h, row + k * sizeof(uint16_t), sizeof(uint16_t));
  return h;
}

template <TensorType T>
FloatVec load_by_lanes(const uint8_t* row, int64_t k) {
  alignas(FloatVec::arch_type::alignment()) float lanes[FloatVec::size];
  for (int64_t i = 0; i < static_cast<int64_t>(FloatVec::size); ++i) lanes[i] = WeightRow<T>::at(row, k + i);
  return FloatVec::load_aligned(lanes);
}

template <>
struct WeightRow<TensorType::F32> {
  static float at(const uint8_t* row, int64_t k) {
    float v;
    std::memcpy(&v, row + k * sizeof(float), sizeof(float));
    return v;
  }
  // Elements k .. k + FloatVec::size - 1.
  static FloatVec load(const uint8_t* row, int64_t k) {
    return FloatVec::load_unaligned(reinterpret_cast<const float*>(row) + k);
  }
};

template <>
struct WeightRow<TensorType::F16> {
  static float at(const uint8_t* row, int64_t k) { return fp16_to_fp32(half_bits_at(row, k)); }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__F16C__) && defined(__AVX__)
    static_assert(FloatVec::size == 8);
    const auto* halves = reinterpret_cast<const __m128i*>(row + k * sizeof(uint16_t));
    return _mm256_cvtph_ps(_mm_loadu_si128(halves));
#else
    return load_by_lanes<TensorType::F16>(row, k);
#endif
  }
};

template <>
struct WeightRow<TensorType::Q8_0> {
  static const BlockQ8_0& block(const uint8_t* row, int64_t k) {
    return reinterpret_cast<const BlockQ8_0*>(row)[k / kQuantBlockElems];
  }
  static float at(const uint8_t* row, int64_t k) {
    const BlockQ8_0& b = block(row, k);
    return fp16_to_fp32(b.d) * static_cast<float>(b.qs[k % kQuantBlockElems]);
  }
  // k is a multiple of FloatVec::size, so the lanes never straddle two blocks.
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const BlockQ8_0& b = block(row, k);
    const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + k % kQuantBlockElems));
    const FloatVec q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
    return FloatVec(fp16_to_fp32(b.d)) * q;
#else
    return load_by_lanes<TensorType::Q8_0>(row, k);
#endif
  }
};

template <>
struct WeightRow<TensorType::Q4_0> {
  static const BlockQ4_0& block(const uint8_t* row, int64_t k) {
    return reinterpret_cast<const BlockQ4_0*>(row)[k / kQuantBlockElems];
  }
  static float at(const uint8_t* row, int64_t k) {
    const BlockQ4_0& b = block(row, k);
    const int j = static_cast<int>(k % kQuantBlockElems);
    const uint8_t byte = b.qs[j % 16];
    const int nibble = j < 16 ? (byte & 0x0f) : (byte >> 4);
    return fp16_to_fp32(b.d) * static_cast<float>(nibble - 8);
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const BlockQ4_0& b = block(row, k);
    const int j = static_cast<int>(k % kQuantBlockElems);
    __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + j % 16));
    if (j >= 16) bytes = _mm_srli_epi16(bytes, 4);  // high nibbles down (mask below clears the rest)
    const __m128i nibbles = _mm_and_si128(bytes, _mm_set1_epi8(0x0f));
    // nibble - 8 is exact in float either way, so this matches at().
    const FloatVec q = FloatVec(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nibbles))) - FloatVec(8.0f);
    return FloatVec(fp16_to_fp32(b.d)) * q;
#else
    return load_by_lanes<TensorType::Q4_0>(row, k);
#endif
  }
};

}  // namespace kiln::kernels

// Specializations kept in files of their own; included here, after the
// primary template, so that whoever sees WeightRow sees every type.
#include "kernels/weight_row_bf16.hpp"
#include "kernels/weight_row_kquant.hpp"
