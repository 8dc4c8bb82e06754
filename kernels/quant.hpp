// The 32-element quantized block formats (the K-quants are in quant_k.hpp
// and quant_k_low.hpp, the non-linear IQ4 types in quant_iq4.hpp), and
// whole-row conversion between any weight type and float.
#pragma once

#include <cstdint>

#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

inline constexpr int kQuantBlockElems = 32;

// Q8_0: value = d * qs[j].
struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQuantBlockElems];
};

// Q4_0: element j < 16 is the low nibble of qs[j], element j + 16 its high
// nibble; value = d * (nibble - 8).
struct BlockQ4_0 {
  uint16_t d;  // fp16 scale
  uint8_t qs[kQuantBlockElems / 2];
};

// Q5_0: Q4_0's nibbles with a fifth bit each, bit j of qh (a little-endian
// 32-bit word) for element j; value = d * (code - 16).
struct BlockQ5_0 {
  uint16_t d;  // fp16 scale
  uint8_t qh[4];
  uint8_t qs[kQuantBlockElems / 2];
};

// Q5_1: Q5_0's codes without an offset but with a min; value = d * code + m.
struct BlockQ5_1 {
  uint16_t d;  // fp16 scale
  uint16_t m;  // fp16 min
  uint8_t qh[4];
  uint8_t qs[kQuantBlockElems / 2];
};

static_assert(sizeof(BlockQ8_0) == traits_of(TensorType::Q8_0).block_bytes);
static_assert(sizeof(BlockQ4_0) == traits_of(TensorType::Q4_0).block_bytes);
static_assert(sizeof(BlockQ5_0) == traits_of(TensorType::Q5_0).block_bytes);
static_assert(sizeof(BlockQ5_1) == traits_of(TensorType::Q5_1).block_bytes);
static_assert(traits_of(TensorType::Q8_0).block_elems == kQuantBlockElems);
static_assert(traits_of(TensorType::Q4_0).block_elems == kQuantBlockElems);
static_assert(traits_of(TensorType::Q5_0).block_elems == kQuantBlockElems);
static_assert(traits_of(TensorType::Q5_1).block_elems == kQuantBlockElems);

// The nibble of element j (0..31) of a 32-element block's 16 bytes: the low
// nibble of byte j for j < 16, the high nibble of byte j - 16 after that
// (Q4_0, Q5_0, Q5_1, IQ4_NL, MXFP4 and each 32 elements of IQ4_XS).
inline int block_nibble(const uint8_t (&qs)[kQuantBlockElems / 2], int j) {
  return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4;
}

// The 5-bit code of element j of a Q5_0 or Q5_1 block.
template <class Block>
int q5_code(const Block& b, int j) {
  return block_nibble(b.qs, j) | (b.qh[j / 8] >> (j % 8) & 1) << 4;
}

// n elements of a row stored as type t (n a multiple of t's block size).
void dequantize_row(TensorType t, const void* src, float* dst, int64_t n);

// Stores n floats as type t, quantizing like ggml's reference quantizers so
// kiln can produce the same bytes as llama.cpp's tools.
void quantize_row(TensorType t, const float* src, void* dst, int64_t n);

}  // namespace kiln::kernels
