// The K-quant block formats (llama.cpp's Q4_K, Q5_K, Q6_K): super-blocks of
// 256 elements split into sub-blocks that each have their own small integer
// scale, itself a multiple of the super-block's fp16 scale. This file is the
// byte layout: the structs, where each element's bits live, and quantizers.
#pragma once

#include <cstdint>

#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

inline constexpr int kSuperBlockElems = 256;

// Q4_K: 8 sub-blocks of 32 elements; element j of sub-block s has the value
// d * scale[s] * code - dmin * min[s], with a 4-bit code and 6-bit scale and
// min (packed in `scales`, see unpack_scale_min).
struct BlockQ4_K {
  uint16_t d;     // fp16 unit of the sub-block scales
  uint16_t dmin;  // fp16 unit of the sub-block mins
  uint8_t scales[12];
  uint8_t qs[kSuperBlockElems / 2];  // low 4 bits of the codes (see low_nibble_code)
};

// Q5_K: Q4_K with a fifth bit per code, kept in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kSuperBlockElems / 8];  // bit s of qh[l]: fifth bit of element l of sub-block s
  uint8_t qs[kSuperBlockElems / 2];
};

// Q6_K: 16 sub-blocks of 16 elements, no min; element j has the value
// d * scales[j / 16] * (code - 32) with a 6-bit code (see q6_k_code).
struct BlockQ6_K {
  uint8_t ql[kSuperBlockElems / 2];  // low 4 bits of the codes
  uint8_t qh[kSuperBlockElems / 4];  // high 2 bits of the codes
  int8_t scales[kSuperBlockElems / 16];
  uint16_t d;  // fp16 unit of the sub-block scales
};

static_assert(sizeof(BlockQ4_K) == traits_of(TensorType::Q4_K).block_bytes);
static_assert(sizeof(BlockQ5_K) == traits_of(TensorType::Q5_K).block_bytes);
static_assert(sizeof(BlockQ6_K) == traits_of(TensorType::Q6_K).block_bytes);
static_assert(traits_of(TensorType::Q4_K).block_elems == kSuperBlockElems);
static_assert(traits_of(TensorType::Q5_K).block_elems == kSuperBlockElems);
static_assert(traits_of(TensorType::Q6_K).block_elems == kSuperBlockElems);

struct ScaleMin {
  int scale;
  int min;
};

// The 6-bit scale and min of Q4_K/Q5_K sub-block s (0..7). Bytes 0-3 hold
// scales 0-3 in their low 6 bits, bytes 4-7 mins 0-3. Sub-blocks 4-7 keep
// their low 4 bits in bytes 8-11 (scale in the low nibble, min in the high
// one) and their top 2 bits in the top bits of bytes 0-3 (scales) and 4-7
// (mins).
inline ScaleMin unpack_scale_min(const uint8_t (&scales)[12], int s) {
  if (s < 4) return {scales[s] & 0x3f, scales[s + 4] & 0x3f};
  return {(scales[s + 4] & 0x0f) | (scales[s - 4] >> 6) << 4, (scales[s + 4] >> 4) | (scales[s] >> 6) << 4};
}

// Low 4 bits of the code of element j (0..255) of a Q4_K/Q5_K super-block.
// Each 64-element chunk c owns bytes qs[32c .. 32c + 31]: its first 32
// elements in their low nibbles, the other 32 in their high nibbles.
inline int low_nibble_code(const uint8_t (&qs)[kSuperBlockElems / 2], int j) {
  const uint8_t byte = qs[j / 64 * 32 + j % 32];
  return j / 32 % 2 == 0 ? byte & 0x0f : byte >> 4;
}

inline int q5_k_code(const BlockQ5_K& b, int j) {
  return low_nibble_code(b.qs, j) | ((b.qh[j % 32] >> (j / 32)) & 1) << 4;
}

// Code (0..63) of element j of a Q6_K super-block. Each 128-element half h
// owns ql[64h ..] and qh[32h ..]; in it, element l (0..31) of quarter q
// (0..3) has its low 4 bits in the low (q < 2) or high (q >= 2) nibble of
// ql[64h + 32 (q % 2) + l], and its high 2 bits at bit 2q of qh[32h + l].
inline int q6_k_code(const BlockQ6_K& b, int j) {
  const int h = j / 128;
  const int q = j % 128 / 32;
  const int l = j % 32;
  const uint8_t low = b.ql[64 * h + 32 * (q % 2) + l];
  const int low_bits = q < 2 ? low & 0x0f : low >> 4;
  return low_bits | ((b.qh[32 * h + l] >> (2 * q)) & 3) << 4;
}

// n floats (a multiple of 256) as K-quant blocks. Round to nearest, in the
// manner of ggml's reference quantizers but without their search for the
// error-minimising scales: each sub-block's scale covers its range, scales
// are rounded to multiples of the super-block unit, then every code to the
// nearest representable value.
void quantize_row_q4_k(const float* x, BlockQ4_K* out, int64_t n);
void quantize_row_q5_k(const float* x, BlockQ5_K* out, int64_t n);
void quantize_row_q6_k(const float* x, BlockQ6_K* out, int64_t n);

}  // namespace kiln::kernels
