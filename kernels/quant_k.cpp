#include "kernels/quant_k.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.hpp"

namespace kiln::kernels {

namespace {

int nearest(float v) { return static_cast<int>(std::lround(v)); }

// Codes of one Q4_K/Q5_K super-block before they are split into bit fields.
struct AffineSuperBlock {
  uint16_t d = 0;
  uint16_t dmin = 0;
  uint8_t scales[12] = {};
  uint8_t codes[kSuperBlockElems] = {};
};

// Inverse of unpack_scale_min, into zeroed bytes.
void pack_scale_min(uint8_t (&scales)[12], int s, int scale, int min) {
  if (s < 4) {
    scales[s] |= static_cast<uint8_t>(scale);
    scales[s + 4] |= static_cast<uint8_t>(min);
    return;
  }
  scales[s + 4] |= static_cast<uint8_t>((scale & 0x0f) | (min & 0x0f) << 4);
  scales[s - 4] |= static_cast<uint8_t>((scale >> 4) << 6);
  scales[s] |= static_cast<uint8_t>((min >> 4) << 6);
}

// Each 32-element sub-block spans [min(x, 0), max(x)] in max_code steps (the
// stored min is subtracted, so it cannot lie above zero). Steps and mins
// become 6-bit multiples of d and dmin, chosen so the largest is 63; the codes
// are then rounded against the scale and min as stored, which is what a
// reader will see.
AffineSuperBlock quantize_affine(const float* x, int max_code) {
  constexpr int kSubBlocks = 8;
  constexpr int kSubElems = kSuperBlockElems / kSubBlocks;
  float step[kSubBlocks];
  float neg_min[kSubBlocks];
  for (int s = 0; s < kSubBlocks; ++s) {
    const float* sub = x + s * kSubElems;
    const auto [lo, hi] = std::minmax_element(sub, sub + kSubElems);
    neg_min[s] = -std::min(*lo, 0.0f);
    step[s] = (*hi + neg_min[s]) / static_cast<float>(max_code);
  }

  AffineSuperBlock out;
  out.d = fp32_to_fp16(*std::max_element(step, step + kSubBlocks) / 63.0f);
  out.dmin = fp32_to_fp16(*std::max_element(neg_min, neg_min + kSubBlocks) / 63.0f);
  const float d = fp16_to_fp32(out.d);
  const float dmin = fp16_to_fp32(out.dmin);
  for (int s = 0; s < kSubBlocks; ++s) {
    const int scale = d > 0.0f ? std::min(63, nearest(step[s] / d)) : 0;
    const int min = dmin > 0.0f ? std::min(63, nearest(neg_min[s] / dmin)) : 0;
    pack_scale_min(out.scales, s, scale, min);
    const float stored_step = d * static_cast<float>(scale);
    const float stored_min = dmin * static_cast<float>(min);
    for (int l = 0; l < kSubElems; ++l) {
      const int j = s * kSubElems + l;
      const int code = stored_step > 0.0f ? nearest((x[j] + stored_min) / stored_step) : 0;
      out.codes[j] = static_cast<uint8_t>(std::clamp(code, 0, max_code));
    }
  }
  return out;
}

// Bytes of the low 4 bits of 256 codes, in the order low_nibble_code reads.
void pack_low_nibbles(const uint8_t (&codes)[kSuperBlockElems], uint8_t (&qs)[kSuperBlockElems / 2]) {
  std::memset(qs, 0, sizeof qs);
  for (int j = 0; j < kSuperBlockElems; ++j)
    qs[j / 64 * 32 + j % 32] |= static_cast<uint8_t>((codes[j] & 0x0f) << (j / 32 % 2 * 4));
}

// The fields Q4_K and Q5_K share: scales, mins and the low 4 bits of each code.
template <class Block>
void store_affine(const AffineSuperBlock& q, Block& out) {
  out.d = q.d;
  out.dmin = q.dmin;
  std::memcpy(out.scales, q.scales, sizeof out.scales);
  pack_low_nibbles(q.codes, out.qs);
}

void quantize_block_q4_k(const float* x, BlockQ4_K& out) { store_affine(quantize_affine(x, 15), out); }

void quantize_block_q5_k(const float* x, BlockQ5_K& out) {
  const AffineSuperBlock q = quantize_affine(x, 31);
  store_affine(q, out);
  std::memset(out.qh, 0, sizeof out.qh);
  for (int j = 0; j < kSuperBlockElems; ++j) out.qh[j % 32] |= static_cast<uint8_t>((q.codes[j] >> 4) << (j / 32));
}

// Like Q4_0, each 16-element sub-block maps its element of largest magnitude
// to code 0 (value -32 * step), keeping the sign in the step, so the
// asymmetric range [-32, 31] is used on the side that needs it; likewise the
// largest step becomes scale -128 times d. Codes are rounded against the
// stored scale.
void quantize_block_q6_k(const float* x, BlockQ6_K& out) {
  constexpr int kSubBlocks = 16;
  constexpr int kSubElems = kSuperBlockElems / kSubBlocks;
  const auto by_magnitude = [](float a, float b) { return std::fabs(a) < std::fabs(b); };
  float step[kSubBlocks];
  for (int s = 0; s < kSubBlocks; ++s) {
    const float* sub = x + s * kSubElems;
    step[s] = *std::max_element(sub, sub + kSubElems, by_magnitude) / -32.0f;
  }
  out.d = fp32_to_fp16(*std::max_element(step, step + kSubBlocks, by_magnitude) / -128.0f);
  const float d = fp16_to_fp32(out.d);

  uint8_t codes[kSuperBlockElems];
  for (int s = 0; s < kSubBlocks; ++s) {
    const int scale = d != 0.0f ? std::clamp(nearest(step[s] / d), -128, 127) : 0;
    out.scales[s] = static_cast<int8_t>(scale);
    const float stored_step = d * static_cast<float>(scale);
    for (int l = 0; l < kSubElems; ++l) {
      const int j = s * kSubElems + l;
      const int code = stored_step != 0.0f ? nearest(x[j] / stored_step) + 32 : 32;
      codes[j] = static_cast<uint8_t>(std::clamp(code, 0, 63));
    }
  }

  // The inverse of q6_k_code.
  std::memset(out.ql, 0, sizeof out.ql);
  std::memset(out.qh, 0, sizeof out.qh);
  for (int j = 0; j < kSuperBlockElems; ++j) {
    const int h = j / 128;
    const int q = j % 128 / 32;
    const int l = j % 32;
    out.ql[64 * h + 32 * (q % 2) + l] |= static_cast<uint8_t>((codes[j] & 0x0f) << (q < 2 ? 0 : 4));
    out.qh[32 * h + l] |= static_cast<uint8_t>((codes[j] >> 4) << (2 * q));
  }
}

template <class Block, void (*QuantizeBlock)(const float*, Block&)>
void quantize_blocks(const float* x, Block* out, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlockElems; ++b) QuantizeBlock(x + b * kSuperBlockElems, out[b]);
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* out, int64_t n) {
  quantize_blocks<BlockQ4_K, quantize_block_q4_k>(x, out, n);
}

void quantize_row_q5_k(const float* x, BlockQ5_K* out, int64_t n) {
  quantize_blocks<BlockQ5_K, quantize_block_q5_k>(x, out, n);
}

void quantize_row_q6_k(const float* x, BlockQ6_K* out, int64_t n) {
  quantize_blocks<BlockQ6_K, quantize_block_q6_k>(x, out, n);
}

}  // namespace kiln::kernels
