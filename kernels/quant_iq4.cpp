#include "kernels/quant_iq4.hpp"

#include <cmath>
#include <cstring>
#include <algorithm>

#include "kernels/fp16.hpp"

namespace kiln::kernels {

namespace {

// The code whose value is nearest to v (the lower one on a tie).
int nearest_code(float v) {
  int best = 0;
  for (int c = 1; c < 16; ++c)
    if (std::fabs(v - kIq4Values[c]) < std::fabs(v - kIq4Values[best])) best = c;
  return best;
}

// The codes of 32 values under the scale d (any codes when d is 0: every
// value is then 0).
void pick_codes(const float* x, float d, uint8_t (&codes)[kQuantBlockElems]) {
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j) codes[j] = static_cast<uint8_t>(nearest_code(x[j] * inv_d));
}

// The scale of 32 values before it is stored: the one that puts the element
// of largest magnitude on -127, then the least-squares scale for the codes
// that gives.
float fit_scale(const float* x) {
  float max_signed = 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j)
    if (std::fabs(x[j]) > std::fabs(max_signed)) max_signed = x[j];
  const float d = max_signed / static_cast<float>(kIq4Values[0]);
  uint8_t codes[kQuantBlockElems];
  pick_codes(x, d, codes);
  double sum_qx = 0.0, sum_qq = 0.0;
  for (int j = 0; j < kQuantBlockElems; ++j) {
    const double q = kIq4Values[codes[j]];
    sum_qx += q * x[j];
    sum_qq += q * q;
  }
  return sum_qq > 0.0 ? static_cast<float>(sum_qx / sum_qq) : 0.0f;
}

// 32 codes as Q4_0 places its nibbles.
void pack_nibbles(const uint8_t (&codes)[kQuantBlockElems], uint8_t* qs) {
  for (int j = 0; j < kQuantBlockElems / 2; ++j) qs[j] = static_cast<uint8_t>(codes[j] | codes[j + 16] << 4);
}

void quantize_block_iq4_nl(const float* x, BlockIQ4_NL& out) {
  out.d = fp32_to_fp16(fit_scale(x));
  uint8_t codes[kQuantBlockElems];
  pick_codes(x, fp16_to_fp32(out.d), codes);
  pack_nibbles(codes, out.qs);
}

void quantize_block_iq4_xs(const float* x, BlockIQ4_XS& out) {
  constexpr int kSubBlocks = kSuperBlockElems / kQuantBlockElems;
  float scale[kSubBlocks];
  float max_signed = 0.0f;
  for (int s = 0; s < kSubBlocks; ++s) {
    scale[s] = fit_scale(x + s * kQuantBlockElems);
    if (std::fabs(scale[s]) > std::fabs(max_signed)) max_signed = scale[s];
  }
  out.d = fp32_to_fp16(max_signed / -32.0f);
  const float d = fp16_to_fp32(out.d);
  out.scales_h = 0;
  std::memset(out.scales_l, 0, sizeof out.scales_l);
  for (int s = 0; s < kSubBlocks; ++s) {
    const int l = d != 0.0f ? std::clamp(static_cast<int>(std::lround(scale[s] / d)), -32, 31) : 0;
    const int stored = l + 32;
    out.scales_l[s / 2] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (s % 2)));
    out.scales_h |= static_cast<uint16_t>((stored >> 4) << (2 * s));
    uint8_t codes[kQuantBlockElems];
    pick_codes(x + s * kQuantBlockElems, d * static_cast<float>(l), codes);
    pack_nibbles(codes, out.qs + s * 16);
  }
}

}  // namespace

void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* out, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlockElems; ++b) quantize_block_iq4_nl(x + b * kQuantBlockElems, out[b]);
}

void quantize_row_iq4_xs(const float* x, BlockIQ4_XS* out, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlockElems; ++b) quantize_block_iq4_xs(x + b * kSuperBlockElems, out[b]);
}

}  // namespace kiln::kernels
