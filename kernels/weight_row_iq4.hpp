// WeightRow for IQ4_NL and IQ4_XS (included by weight_row.hpp): element
// access for dequantization, each value a product of the scales and the
// codebook value. (The matmul reads them through the integer kernels.)
#pragma once

#include <cstdint>

#include "kernels/fp16.hpp"
#include "kernels/quant_iq4.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

template <>
struct WeightRow<TensorType::IQ4_NL> {
  static float at(const uint8_t* row, int64_t k) {
    const BlockIQ4_NL& b = reinterpret_cast<const BlockIQ4_NL*>(row)[k / kQuantBlockElems];
    const int nibble = block_nibble(b.qs, static_cast<int>(k % kQuantBlockElems));
    return fp16_to_fp32(b.d) * static_cast<float>(kIq4Values[nibble]);
  }
};

template <>
struct WeightRow<TensorType::IQ4_XS> {
  static float at(const uint8_t* row, int64_t k) {
    const BlockIQ4_XS& b = reinterpret_cast<const BlockIQ4_XS*>(row)[k / kSuperBlockElems];
    const int j = static_cast<int>(k % kSuperBlockElems);
    return fp16_to_fp32(b.d) * static_cast<float>(iq4_xs_scale(b, j / kQuantBlockElems)) *
           static_cast<float>(kIq4Values[iq4_xs_nibble(b, j)]);
  }
};

}  // namespace kiln::kernels
