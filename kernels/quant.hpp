// The 32-element quantized block formats (the K-quants are in quant_k.hpp),
// and whole-row conversion between any weight type and float.
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

static_assert(sizeof(BlockQ8_0) == traits_of(TensorType::Q8_0).block_bytes);
static_assert(sizeof(BlockQ4_0) == traits_of(TensorType::Q4_0).block_bytes);
static_assert(traits_of(TensorType::Q8_0).block_elems == kQuantBlockElems);
static_assert(traits_of(TensorType::Q4_0).block_elems == kQuantBlockElems);

// n elements of a row stored as type t (n a multiple of t's block size).
void dequantize_row(TensorType t, const void* src, float* dst, int64_t n);

// Stores n floats as type t, quantizing like ggml's reference quantizers so
// kiln can produce the same bytes as llama.cpp's tools.
void quantize_row(TensorType t, const float* src, void* dst, int64_t n);

}  // namespace kiln::kernels
