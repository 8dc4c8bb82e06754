#include "kernels/fp16.hpp"

#include <bit>
#include <cmath>

namespace kiln::kernels {

namespace {

// v >> shift, rounded to nearest with ties to even (shift >= 1).
uint32_t shift_right_round_even(uint32_t v, int shift) {
  const uint32_t kept = v >> shift;
  const uint32_t dropped = v & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((dropped > half || (dropped == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

// Half layout: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
float fp16_to_fp32_portable(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;

  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
  }
  if (exponent == 0x1f) {  // inf, or NaN: quieted with its payload kept, like F16C
    const uint32_t quiet = mantissa != 0 ? 0x400000 : 0;
    return std::bit_cast<float>(sign | 0x7f800000 | quiet | (mantissa << 13));
  }
  // Normal: rebias the exponent from 15 to 127 (127 - 15 = 112).
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t fp32_to_fp16_portable(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffff;

  if (magnitude > 0x7f800000)  // NaN: quiet it and keep the top payload bits, like F16C
    return sign | 0x7e00 | ((magnitude >> 13) & 0x3ff);
  if (magnitude >= 0x47800000)  // >= 2^16 (or inf): too large for a half
    return sign | 0x7c00;
  if (magnitude >= 0x38800000) {  // a normal half (or rounds up to inf, 0x7c00)
    // Rebias the exponent (127 -> 15) in place and drop 13 mantissa bits; a
    // rounding carry correctly moves into the exponent.
    return sign | static_cast<uint16_t>(shift_right_round_even(magnitude - (112u << 23), 13));
  }
  // Below the smallest normal half (2^-14): the result counts units of 2^-24.
  // value = mantissa24 * 2^(exponent - 150), so in those units it is
  // mantissa24 >> (126 - exponent). Shifts over 24 leave less than half a unit.
  const int shift = 126 - static_cast<int>(magnitude >> 23);
  if (shift > 24) return sign;
  const uint32_t mantissa24 = (magnitude & 0x7fffff) | 0x800000;
  return sign | static_cast<uint16_t>(shift_right_round_even(mantissa24, shift));
}

}  // namespace kiln::kernels
