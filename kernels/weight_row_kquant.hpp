// WeightRow for the K-quants (included by weight_row.hpp): each access
// decodes just the sub-block scale and the codes it needs. load()'s k is a
// multiple of FloatVec::size, so its lanes share one sub-block (of 16 or 32).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/fp16.hpp"
#include "kernels/quant_k.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

namespace kquant {

// A Q4_K/Q5_K sub-block's value = scale * code - offset. Both paths use a
// fused multiply-add, so they round alike whatever the compiler contracts.
struct Affine {
  float scale;
  float offset;

  float operator()(float code) const { return std::fma(scale, code, -offset); }
  FloatVec operator()(FloatVec code) const { return xsimd::fma(FloatVec(scale), code, FloatVec(-offset)); }
};

template <class Block>
Affine sub_block_affine(const Block& b, int j) {
  const ScaleMin sm = unpack_scale_min(b.scales, j / 32);
  return {fp16_to_fp32(b.d) * static_cast<float>(sm.scale), fp16_to_fp32(b.dmin) * static_cast<float>(sm.min)};
}

template <class Block>
const Block& block(const uint8_t* row, int64_t k) {
  return reinterpret_cast<const Block*>(row)[k / kSuperBlockElems];
}

#if defined(__AVX2__)
// Eight codes of 0..255, one per byte, as floats.
inline FloatVec codes_to_floats(__m128i codes) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes)); }

inline __m128i load_8_bytes(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }

// low_nibble_code for elements j .. j + 7, one per byte.
inline __m128i low_nibble_codes(const uint8_t (&qs)[kSuperBlockElems / 2], int j) {
  __m128i bytes = load_8_bytes(qs + j / 64 * 32 + j % 32);
  if (j / 32 % 2 != 0) bytes = _mm_srli_epi16(bytes, 4);  // high nibbles down (the mask clears the rest)
  return _mm_and_si128(bytes, _mm_set1_epi8(0x0f));
}
#endif

}  // namespace kquant

template <>
struct WeightRow<TensorType::Q4_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ4_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(static_cast<float>(low_nibble_code(b.qs, j)));
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const auto& b = kquant::block<BlockQ4_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(kquant::codes_to_floats(kquant::low_nibble_codes(b.qs, j)));
#else
    return load_by_lanes<TensorType::Q4_K>(row, k);
#endif
  }
};

template <>
struct WeightRow<TensorType::Q5_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ5_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(static_cast<float>(q5_k_code(b, j)));
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const auto& b = kquant::block<BlockQ5_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    // Fifth bits: 16 where bit j / 32 of qh[j % 32 ..] is set.
    const __m128i bit = _mm_set1_epi8(static_cast<char>(1 << (j / 32)));
    const __m128i set = _mm_cmpeq_epi8(_mm_and_si128(kquant::load_8_bytes(b.qh + j % 32), bit), bit);
    const __m128i codes = _mm_or_si128(kquant::low_nibble_codes(b.qs, j), _mm_and_si128(set, _mm_set1_epi8(16)));
    return kquant::sub_block_affine(b, j)(kquant::codes_to_floats(codes));
#else
    return load_by_lanes<TensorType::Q5_K>(row, k);
#endif
  }
};

template <>
struct WeightRow<TensorType::Q6_K> {
  static float scale(const BlockQ6_K& b, int j) { return fp16_to_fp32(b.d) * static_cast<float>(b.scales[j / 16]); }
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ6_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return scale(b, j) * static_cast<float>(q6_k_code(b, j) - 32);
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const auto& b = kquant::block<BlockQ6_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    // The byte positions of q6_k_code, for eight consecutive l.
    const int h = j / 128;
    const int q = j % 128 / 32;
    const int l = j % 32;
    __m128i low = kquant::load_8_bytes(b.ql + 64 * h + 32 * (q % 2) + l);
    if (q >= 2) low = _mm_srli_epi16(low, 4);
    low = _mm_and_si128(low, _mm_set1_epi8(0x0f));
    __m128i high = _mm_srl_epi16(kquant::load_8_bytes(b.qh + 32 * h + l), _mm_cvtsi32_si128(2 * q));
    high = _mm_slli_epi16(_mm_and_si128(high, _mm_set1_epi8(3)), 4);  // 2 bits moved up stay inside their byte
    // code - 32 is exact in float either way, so this matches at().
    const FloatVec centred = kquant::codes_to_floats(_mm_or_si128(low, high)) - FloatVec(32.0f);
    return FloatVec(scale(b, j)) * centred;
#else
    return load_by_lanes<TensorType::Q6_K>(row, k);
#endif
  }
};

}  // namespace kiln::kernels
