// WeightRow for BF16 rows (included by weight_row.hpp).
#pragma once

#include <cstdint>

#include "kernels/bf16.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

template <>
struct WeightRow<TensorType::BF16> {
  static float at(const uint8_t* row, int64_t k) { return bf16_to_fp32(half_bits_at(row, k)); }
  static FloatVec load(const uint8_t* row, int64_t k) {
#if defined(__AVX2__)
    static_assert(FloatVec::size == 8);
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k * sizeof(uint16_t)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
#else
    return load_by_lanes<TensorType::BF16>(row, k);
#endif
  }
};

}  // namespace kiln::kernels
