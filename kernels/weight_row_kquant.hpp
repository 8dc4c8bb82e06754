// WeightRow for the K-quants (included by weight_row.hpp): element access for
// dequantization; each access decodes just the sub-block scale and the code
// it needs. (The matmul reads K-quants through the integer kernels,
// dot_kquant.hpp, not as floats.)
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/fp16.hpp"
#include "kernels/quant_k.hpp"
#include "kernels/quant_k_low.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

namespace kquant {

// A Q4_K/Q5_K sub-block's value = scale * code - offset, with a fused
// multiply-add.
struct Affine {
  float scale;
  float offset;

  float operator()(float code) const { return std::fma(scale, code, -offset); }
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

}  // namespace kquant

template <>
struct WeightRow<TensorType::Q4_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ4_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(static_cast<float>(low_nibble_code(b.qs, j)));
  }
};

template <>
struct WeightRow<TensorType::Q5_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ5_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(static_cast<float>(q5_k_code(b, j)));
  }
};

template <>
struct WeightRow<TensorType::Q6_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ6_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return fp16_to_fp32(b.d) * static_cast<float>(b.scales[j / 16]) * static_cast<float>(q6_k_code(b, j) - 32);
  }
};

template <>
struct WeightRow<TensorType::Q2_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ2_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    const uint8_t scale_min = b.scales[j / 16];
    const kquant::Affine affine{fp16_to_fp32(b.d) * static_cast<float>(scale_min & 0x0f),
                                fp16_to_fp32(b.dmin) * static_cast<float>(scale_min >> 4)};
    return affine(static_cast<float>(low_crumb_code(b.qs, j)));
  }
};

template <>
struct WeightRow<TensorType::Q3_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ3_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return fp16_to_fp32(b.d) * static_cast<float>(q3_k_scale(b, j / 16)) * static_cast<float>(q3_k_code(b, j) - 4);
  }
};

}  // namespace kiln::kernels
