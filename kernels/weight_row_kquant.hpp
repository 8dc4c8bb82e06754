// WeightRow for the K-quants (included by weight_row.hpp): each access
// decodes just the sub-block scale and the codes it needs. load()'s k is a
// multiple of kFloatLanes (at most 16), so its lanes share one sub-block (of
// 16 or 32 elements).
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

// The affine value of kFloatLanes codes (0..255, one per byte) of one sub-block.
inline FloatVec affine_lanes(const Affine& f, const uint8_t* codes) { return f(widen_bytes<false>(codes)); }

// Nibbles of kFloatLanes consecutive bytes, low (shift 0) or high (shift 4).
inline void nibbles(const uint8_t* bytes, int shift, uint8_t* codes) {
  for (int i = 0; i < kFloatLanes; ++i) codes[i] = (bytes[i] >> shift) & 0x0f;
}

// low_nibble_code for elements j .. j + kFloatLanes - 1 of a super-block.
inline void low_nibble_codes(const uint8_t (&qs)[kSuperBlockElems / 2], int j, uint8_t* codes) {
  nibbles(qs + j / 64 * 32 + j % 32, 4 * (j / 32 % 2), codes);
}

static_assert(kFloatLanes <= 16, "a load must stay inside one sub-block of 16");

}  // namespace kquant

template <>
struct WeightRow<TensorType::Q4_K> {
  static float at(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ4_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    return kquant::sub_block_affine(b, j)(static_cast<float>(low_nibble_code(b.qs, j)));
  }
  static FloatVec load(const uint8_t* row, int64_t k) {
    const auto& b = kquant::block<BlockQ4_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    uint8_t codes[kFloatLanes];
    kquant::low_nibble_codes(b.qs, j, codes);
    return kquant::affine_lanes(kquant::sub_block_affine(b, j), codes);
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
    const auto& b = kquant::block<BlockQ5_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    uint8_t codes[kFloatLanes];
    kquant::low_nibble_codes(b.qs, j, codes);
    for (int i = 0; i < kFloatLanes; ++i) codes[i] |= ((b.qh[j % 32 + i] >> (j / 32)) & 1) << 4;  // fifth bits
    return kquant::affine_lanes(kquant::sub_block_affine(b, j), codes);
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
    const auto& b = kquant::block<BlockQ6_K>(row, k);
    const int j = static_cast<int>(k % kSuperBlockElems);
    // q6_k_code's byte positions, for consecutive l.
    const int h = j / 128;
    const int q = j % 128 / 32;
    const int l = j % 32;
    uint8_t codes[kFloatLanes];
    kquant::nibbles(b.ql + 64 * h + 32 * (q % 2) + l, q >= 2 ? 4 : 0, codes);
    for (int i = 0; i < kFloatLanes; ++i) codes[i] |= ((b.qh[32 * h + l + i] >> (2 * q)) & 3) << 4;
    // code - 32 is exact in float either way, so this matches at().
    return FloatVec(scale(b, j)) * (widen_bytes<false>(codes) - FloatVec(32.0f));
  }
};

}  // namespace kiln::kernels
