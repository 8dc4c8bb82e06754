// WeightRow for BF16 rows (included by weight_row.hpp).
#pragma once

#include <cstdint>

#include "kernels/bf16.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

template <>
struct WeightRow<TensorType::BF16> {
  static float at(const uint8_t* row, int64_t k) { return bf16_to_fp32(half_bits_at(row, k)); }
  static FloatVec load(const uint8_t* row, int64_t k) { return widen_bf16(row + k * sizeof(uint16_t)); }
};

}  // namespace kiln::kernels
