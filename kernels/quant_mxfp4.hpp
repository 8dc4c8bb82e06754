// MXFP4 (the OCP microscaling format gpt-oss ships its experts in; GGUF type
// 39): blocks of 32 4-bit E2M1 floats sharing one E8M0 scale, a power of two.
// Like IQ4_NL, a 4-bit code picks one of 16 fixed values; ggml stores those
// doubled so that they are integers (kMxfp4Values: E2M1's 0, 0.5, 1, 1.5, 2,
// 3, 4, 6 and their negatives, times 2), and halves the scale to match.
#pragma once

#include <cstdint>

#include "kernels/quant.hpp"

namespace kiln::kernels {

// Twice the E2M1 value of each code (ggml's kvalues_mxfp4).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// The same + 128, as unsigned bytes, for products that want an unsigned
// operand (the bias is code_bias in kernels/int8_dot.hpp).
inline constexpr uint8_t kMxfp4Biased[16] = {128, 129, 130, 131, 132, 134, 136, 140,
                                             128, 127, 126, 125, 124, 122, 120, 116};
static_assert([] {
  for (int i = 0; i < 16; ++i)
    if (kMxfp4Biased[i] != kMxfp4Values[i] + 128) return false;
  return true;
}());

// value = 2^(e - 127) * kMxfp4Values[nibble] / 2, nibbles placed as Q4_0's.
struct BlockMXFP4 {
  uint8_t e;  // E8M0: a biased exponent, no sign or mantissa
  uint8_t qs[kQuantBlockElems / 2];
};

static_assert(sizeof(BlockMXFP4) == traits_of(TensorType::MXFP4).block_bytes);
static_assert(traits_of(TensorType::MXFP4).block_elems == kQuantBlockElems);

// The float bits of 2^(e - 127), exact for every e below 255 (e = 0 is the
// subnormal 2^-127): the exponent field e, or the top mantissa bit when e is
// 0. The integer kernels build it the same way, lane by lane.
constexpr uint32_t e8m0_bits(uint8_t e) {
  const uint32_t bits = uint32_t{e} << 23;
  return bits > 0x00400000u ? bits : 0x00400000u;
}

// 2^(e - 128): the scale of the doubled values, as ggml's dequantizer uses it.
float mxfp4_half_scale(uint8_t e);

// n floats as MXFP4 blocks (n a multiple of 32), as ggml's reference
// quantizer does: the scale puts the block's largest magnitude between 4
// and 8 (2^(floor(log2 max) - 2)), larger values saturate at 6, and each
// element gets the code nearest to it (the first on a tie).
void quantize_row_mxfp4(const float* x, BlockMXFP4* out, int64_t n);

}  // namespace kiln::kernels
