// WeightRow for MXFP4 (included by weight_row.hpp): element access for
// dequantization, the doubled E2M1 value times the halved power-of-two
// scale, as ggml's dequantizer computes it. (The matmul reads MXFP4 through
// the integer kernels.)
#pragma once

#include <cstdint>

#include "kernels/quant_mxfp4.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

template <>
struct WeightRow<TensorType::MXFP4> {
  static float at(const uint8_t* row, int64_t k) {
    const BlockMXFP4& b = reinterpret_cast<const BlockMXFP4*>(row)[k / kQuantBlockElems];
    const int nibble = block_nibble(b.qs, static_cast<int>(k % kQuantBlockElems));
    return static_cast<float>(kMxfp4Values[nibble]) * mxfp4_half_scale(b.e);
  }
};

}  // namespace kiln::kernels
