#include "kernels/quant_k_low.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.hpp"

namespace kiln::kernels {

namespace {

constexpr int kSubBlocks = kSuperBlockElems / 16;

int nearest(float v) { return static_cast<int>(std::lround(v)); }

// The inverse of low_crumb_code, into zeroed bytes.
void pack_crumbs(const uint8_t (&codes)[kSuperBlockElems], uint8_t (&qs)[kSuperBlockElems / 4]) {
  std::memset(qs, 0, sizeof qs);
  for (int j = 0; j < kSuperBlockElems; ++j)
    qs[j / 128 * 32 + j % 32] |= static_cast<uint8_t>((codes[j] & 3) << (2 * (j % 128 / 32)));
}

// Each sub-block spans [min(x, 0), max(x)] in 3 steps; steps and mins
// become 4-bit multiples of d and dmin, the largest 15, and the codes are
// rounded against the scale and min as stored.
void quantize_block_q2_k(const float* x, BlockQ2_K& out) {
  float step[kSubBlocks];
  float neg_min[kSubBlocks];
  for (int s = 0; s < kSubBlocks; ++s) {
    const auto [lo, hi] = std::minmax_element(x + 16 * s, x + 16 * s + 16);
    neg_min[s] = -std::min(*lo, 0.0f);
    step[s] = (*hi + neg_min[s]) / 3.0f;
  }
  out.d = fp32_to_fp16(*std::max_element(step, step + kSubBlocks) / 15.0f);
  out.dmin = fp32_to_fp16(*std::max_element(neg_min, neg_min + kSubBlocks) / 15.0f);
  const float d = fp16_to_fp32(out.d);
  const float dmin = fp16_to_fp32(out.dmin);
  uint8_t codes[kSuperBlockElems];
  for (int s = 0; s < kSubBlocks; ++s) {
    const int scale = d > 0.0f ? std::min(15, nearest(step[s] / d)) : 0;
    const int min = dmin > 0.0f ? std::min(15, nearest(neg_min[s] / dmin)) : 0;
    out.scales[s] = static_cast<uint8_t>(scale | min << 4);
    const float stored_step = d * static_cast<float>(scale);
    const float stored_min = dmin * static_cast<float>(min);
    for (int j = 16 * s; j < 16 * s + 16; ++j) {
      const int code = stored_step > 0.0f ? nearest((x[j] + stored_min) / stored_step) : 0;
      codes[j] = static_cast<uint8_t>(std::clamp(code, 0, 3));
    }
  }
  pack_crumbs(codes, out.qs);
}

// Each sub-block maps its element of largest magnitude to code 0 (value -4
// steps), keeping its sign in the step; the largest step becomes scale -32
// times d. Codes are rounded against the stored scale.
void quantize_block_q3_k(const float* x, BlockQ3_K& out) {
  const auto by_magnitude = [](float a, float b) { return std::fabs(a) < std::fabs(b); };
  float step[kSubBlocks];
  for (int s = 0; s < kSubBlocks; ++s) step[s] = *std::max_element(x + 16 * s, x + 16 * s + 16, by_magnitude) / -4.0f;
  out.d = fp32_to_fp16(*std::max_element(step, step + kSubBlocks, by_magnitude) / -32.0f);
  const float d = fp16_to_fp32(out.d);

  uint8_t codes[kSuperBlockElems];
  std::memset(out.scales, 0, sizeof out.scales);
  for (int s = 0; s < kSubBlocks; ++s) {
    const int scale = d != 0.0f ? std::clamp(nearest(step[s] / d), -32, 31) : 0;
    const int stored = scale + 32;  // the inverse of q3_k_scale
    out.scales[s % 8] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (s / 8)));
    out.scales[8 + s % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (s / 4)));
    const float stored_step = d * static_cast<float>(scale);
    for (int j = 16 * s; j < 16 * s + 16; ++j) {
      const int code = stored_step != 0.0f ? nearest(x[j] / stored_step) + 4 : 4;
      codes[j] = static_cast<uint8_t>(std::clamp(code, 0, 7));
    }
  }
  pack_crumbs(codes, out.qs);
  std::memset(out.hmask, 0, sizeof out.hmask);
  for (int j = 0; j < kSuperBlockElems; ++j) out.hmask[j % 32] |= static_cast<uint8_t>((codes[j] >> 2) << (j / 32));
}

}  // namespace

void quantize_row_q2_k(const float* x, BlockQ2_K* out, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlockElems; ++b) quantize_block_q2_k(x + b * kSuperBlockElems, out[b]);
}

void quantize_row_q3_k(const float* x, BlockQ3_K* out, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlockElems; ++b) quantize_block_q3_k(x + b * kSuperBlockElems, out[b]);
}

}  // namespace kiln::kernels
