// Conversions between bfloat16 (stored as raw uint16_t bits, as in GGUF
// files) and float. bfloat16 is the top half of a float's bits: same sign and
// exponent, 7 mantissa bits.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln::kernels {

inline float bf16_to_fp32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// Rounds to nearest, ties to even (too large rounds to infinity); a NaN stays
// a NaN, made quiet so that dropping its low payload bits cannot turn it into
// infinity.
inline uint16_t fp32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  const uint32_t round_even = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + round_even) >> 16);
}

}  // namespace kiln::kernels
