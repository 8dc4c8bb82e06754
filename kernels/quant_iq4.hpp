// The non-linear 4-bit formats (llama.cpp's IQ4_NL and IQ4_XS): each 4-bit
// code picks one of 16 fixed int8 values, spaced more finely near zero where
// weights are dense, and the value is scaled like Q4_0's. This file is the
// byte layout: the codebook, the structs, where each element's bits live,
// and quantizers.
#pragma once

#include <cstdint>

#include "kernels/quant.hpp"
#include "kernels/quant_k.hpp"

namespace kiln::kernels {

// The values the 16 codes stand for (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The same + 128, as unsigned bytes (1 .. 241), for products that want an
// unsigned operand (the bias is code_bias in kernels/int8_dot.hpp).
inline constexpr uint8_t kIq4Biased[16] = {1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241};
static_assert([] {
  for (int i = 0; i < 16; ++i)
    if (kIq4Biased[i] != kIq4Values[i] + 128) return false;
  return true;
}());

// IQ4_NL: value = d * kIq4Values[nibble], nibbles placed as Q4_0's.
struct BlockIQ4_NL {
  uint16_t d;  // fp16 scale
  uint8_t qs[kQuantBlockElems / 2];
};

// IQ4_XS: a super-block of 8 IQ4_NL-like sub-blocks of 32 elements sharing
// one fp16 unit d; sub-block s has the value d * (scale[s] - 32) *
// kIq4Values[nibble] with a 6-bit scale (see iq4_xs_scale), and its nibbles
// in qs[16s .. 16s + 15] placed as Q4_0's.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;  // bits 2s, 2s + 1: the top 2 bits of sub-block s's scale
  uint8_t scales_l[4];  // nibble s % 2 of byte s / 2: its low 4 bits
  uint8_t qs[kSuperBlockElems / 2];
};

static_assert(sizeof(BlockIQ4_NL) == traits_of(TensorType::IQ4_NL).block_bytes);
static_assert(sizeof(BlockIQ4_XS) == traits_of(TensorType::IQ4_XS).block_bytes);
static_assert(traits_of(TensorType::IQ4_NL).block_elems == kQuantBlockElems);
static_assert(traits_of(TensorType::IQ4_XS).block_elems == kSuperBlockElems);

// Sub-block s's scale, less its offset of 32 (-32..31).
inline int iq4_xs_scale(const BlockIQ4_XS& b, int s) {
  const int low = b.scales_l[s / 2] >> (4 * (s % 2)) & 0x0f;
  const int high = b.scales_h >> (2 * s) & 3;
  return (low | high << 4) - 32;
}

// The nibble of element j (0..255) of an IQ4_XS super-block.
inline int iq4_xs_nibble(const BlockIQ4_XS& b, int j) {
  const uint8_t byte = b.qs[j / 32 * 16 + j % 16];
  return j % 32 < 16 ? byte & 0x0f : byte >> 4;
}

// n floats as IQ4 blocks (n a multiple of the block size). Each 32 values
// get the scale that maps their element of largest magnitude onto the
// codebook's end (-127), refined by least squares over the codes nearest to
// the values; IQ4_XS then rounds the sub-block scales to 6-bit multiples of
// d, the largest to -32 d. Codes are the values nearest to each element
// under the scale as stored.
void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* out, int64_t n);
void quantize_row_iq4_xs(const float* x, BlockIQ4_XS* out, int64_t n);

}  // namespace kiln::kernels
