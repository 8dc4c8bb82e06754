// The 2- and 3-bit K-quant block formats (llama.cpp's Q2_K, Q3_K): super-
// blocks of 256 elements in 16 sub-blocks of 16, each with a small integer
// scale (Q2_K also a min) that is a multiple of the super-block's fp16 unit.
// This file is the byte layout: the structs, where each element's bits
// live, and quantizers.
#pragma once

#include <cstdint>

#include "kernels/quant_k.hpp"

namespace kiln::kernels {

// Q2_K: element j has the value d * scale[j / 16] * code - dmin * min[j / 16]
// with a 2-bit code (see low_crumb_code) and 4-bit scale and min.
struct BlockQ2_K {
  uint8_t scales[kSuperBlockElems / 16];  // sub-block s: scale in the low nibble, min in the high one
  uint8_t qs[kSuperBlockElems / 4];       // the 2-bit codes
  uint16_t d;                             // fp16 unit of the scales
  uint16_t dmin;                          // fp16 unit of the mins
};

// Q3_K: element j has the value d * scale[j / 16] * (code - 4) with a 3-bit
// code (low 2 bits as Q2_K's, the third in hmask, see q3_k_code) and a
// 6-bit scale stored with an offset of 32 (see q3_k_scale).
struct BlockQ3_K {
  uint8_t hmask[kSuperBlockElems / 8];
  uint8_t qs[kSuperBlockElems / 4];
  uint8_t scales[12];
  uint16_t d;
};

static_assert(sizeof(BlockQ2_K) == traits_of(TensorType::Q2_K).block_bytes);
static_assert(sizeof(BlockQ3_K) == traits_of(TensorType::Q3_K).block_bytes);
static_assert(traits_of(TensorType::Q2_K).block_elems == kSuperBlockElems);
static_assert(traits_of(TensorType::Q3_K).block_elems == kSuperBlockElems);

// The 2 low bits of element j (0..255)'s code. Each 128-element half h owns
// qs[32h .. 32h + 31]; its element 32q + l (quarter q, l = 0..31) is at bits
// 2q, 2q + 1 of qs[32h + l].
inline int low_crumb_code(const uint8_t (&qs)[kSuperBlockElems / 4], int j) {
  return qs[j / 128 * 32 + j % 32] >> (2 * (j % 128 / 32)) & 3;
}

// Q3_K's code (0..7) of element j: the third bit of element 32q + l of half
// h is bit 4h + q of hmask[l].
inline int q3_k_code(const BlockQ3_K& b, int j) {
  return low_crumb_code(b.qs, j) | (b.hmask[j % 32] >> (j / 32) & 1) << 2;
}

// Q3_K's scale of sub-block s (0..15), less its offset (-32..31): the low 4
// bits in the low (s < 8) or high nibble of scales[s % 8], the top 2 at bits
// 2 (s / 4), + 1 of scales[8 + s % 4].
inline int q3_k_scale(const BlockQ3_K& b, int s) {
  const int low = b.scales[s % 8] >> (4 * (s / 8)) & 0x0f;
  const int high = b.scales[8 + s % 4] >> (2 * (s / 4)) & 3;
  return (low | high << 4) - 32;
}

// n floats (a multiple of 256) as Q2_K or Q3_K blocks, rounding to nearest
// in the manner of quantize_row_q4_k (quant_k.hpp): Q2_K's sub-blocks span
// [min(x, 0), max(x)] in 3 steps; Q3_K's map their element of largest
// magnitude to code 0 (value -4 steps), as Q6_K's do.
void quantize_row_q2_k(const float* x, BlockQ2_K* out, int64_t n);
void quantize_row_q3_k(const float* x, BlockQ3_K* out, int64_t n);

}  // namespace kiln::kernels
