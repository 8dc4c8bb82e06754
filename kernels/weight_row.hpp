// Reading elements of one weight row, whatever its type, as floats. Both
// accessors produce the same value for an element (the SIMD path is just a
// faster way to get it), so dequantize_row and matmul agree bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arch/simd.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels {

// WeightRow<T>::at(row, k) is element k of a row of type T as a float;
// WeightRow<T>::load(row, k) elements k .. k + kFloatLanes - 1 (k a multiple
// of kFloatLanes), for the types the float matmul reads (the quantized types
// are read by the integer matmul instead, see dot_q8.hpp).
template <TensorType T>
struct WeightRow;

// The k-th 16-bit value of a row of half-width floats (F16 or BF16 bits).
inline uint16_t half_bits_at(const uint8_t* row, int64_t k) {
  uint16_t h;
  std::memcpy(&h, row + k * sizeof(uint16_t), sizeof(uint16_t));
  return h;
}

template <>
struct WeightRow<TensorType::F32> {
  static float at(const uint8_t* row, int64_t k) {
    float v;
    std::memcpy(&v, row + k * sizeof(float), sizeof(float));
    return v;
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
    return FloatVec::load_unaligned(reinterpret_cast<const float*>(row) + k);
  }
};

template <>
struct WeightRow<TensorType::F16> {
  static float at(const uint8_t* row, int64_t k) { return fp16_to_fp32(half_bits_at(row, k)); }
  static FloatVec load(const uint8_t* row, int64_t k) { return widen_f16(row + k * sizeof(uint16_t)); }
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
};

template <>
struct WeightRow<TensorType::Q5_0> {
  static float at(const uint8_t* row, int64_t k) {
    const BlockQ5_0& b = reinterpret_cast<const BlockQ5_0*>(row)[k / kQuantBlockElems];
    return fp16_to_fp32(b.d) * static_cast<float>(q5_code(b, static_cast<int>(k % kQuantBlockElems)) - 16);
  }
};

// d * code + m with a fused multiply-add.
template <>
struct WeightRow<TensorType::Q5_1> {
  static float at(const uint8_t* row, int64_t k) {
    const BlockQ5_1& b = reinterpret_cast<const BlockQ5_1*>(row)[k / kQuantBlockElems];
    const int code = q5_code(b, static_cast<int>(k % kQuantBlockElems));
    return std::fma(fp16_to_fp32(b.d), static_cast<float>(code), fp16_to_fp32(b.m));
  }
};

}  // namespace kiln::kernels

// Specializations kept in files of their own; included here, after the
// primary template, so that whoever sees WeightRow sees every type.
#include "kernels/weight_row_bf16.hpp"
#include "kernels/weight_row_iq4.hpp"
#include "kernels/weight_row_kquant.hpp"
#include "kernels/weight_row_mxfp4.hpp"
