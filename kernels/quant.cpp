#include "kernels/quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/bf16.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quant_iq4.hpp"
#include "kernels/quant_k.hpp"
#include "kernels/quant_k_low.hpp"
#include "kernels/quant_mxfp4.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

namespace {

template <TensorType T>
void dequantize(const void* src, float* dst, int64_t n) {
  const auto* row = static_cast<const uint8_t*>(src);
  for (int64_t k = 0; k < n; ++k) dst[k] = WeightRow<T>::at(row, k);
}

// d = amax / 127 so the largest magnitude maps to +-127.
void quantize_block_q8_0(const float* x, BlockQ8_0& out) {
  float amax = 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = fp32_to_fp16(d);
  for (int j = 0; j < kQuantBlockElems; ++j) out.qs[j] = static_cast<int8_t>(std::round(x[j] * inv_d));
}

// The inverse of q5_code, into the block's qh and qs.
template <class Block>
void store_q5_codes(const uint8_t (&codes)[kQuantBlockElems], Block& out) {
  uint32_t qh = 0;
  for (int j = 0; j < kQuantBlockElems / 2; ++j)
    out.qs[j] = static_cast<uint8_t>((codes[j] & 0x0f) | (codes[j + 16] & 0x0f) << 4);
  for (int j = 0; j < kQuantBlockElems; ++j) qh |= static_cast<uint32_t>(codes[j] >> 4) << j;
  for (int k = 0; k < 4; ++k) out.qh[k] = static_cast<uint8_t>(qh >> (8 * k));
}

// The element of largest magnitude maps to nibble 0 (value -8 * d), keeping
// its sign in d, so the asymmetric range [-8, 7] is used on the side that
// needs it. Nibbles are rounded by truncating q + 8.5 (all of it is >= 0).
void quantize_block_q4_0(const float* x, BlockQ4_0& out) {
  float amax = 0.0f;
  float max_signed = 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max_signed = x[j];
    }
  }
  const float d = max_signed / -8.0f;
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = fp32_to_fp16(d);
  const auto nibble = [&](float v) { return std::min(15, static_cast<int>(v * inv_d + 8.5f)); };
  for (int j = 0; j < kQuantBlockElems / 2; ++j)
    out.qs[j] = static_cast<uint8_t>(nibble(x[j]) | (nibble(x[j + kQuantBlockElems / 2]) << 4));
}

// Q5_0 as Q4_0 with 5 bits: the largest magnitude maps to code 0 (value
// -16 * d); codes are rounded by truncating q + 16.5.
void quantize_block_q5_0(const float* x, BlockQ5_0& out) {
  float max_signed = 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j)
    if (std::fabs(x[j]) > std::fabs(max_signed)) max_signed = x[j];
  const float d = max_signed / -16.0f;
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = fp32_to_fp16(d);
  uint8_t codes[kQuantBlockElems];
  for (int j = 0; j < kQuantBlockElems; ++j)
    codes[j] = static_cast<uint8_t>(std::min(31, static_cast<int>(x[j] * inv_d + 16.5f)));
  store_q5_codes(codes, out);
}

// Q5_1 spans [min(x), max(x)] in 31 steps, min stored as m; codes are
// rounded by truncating (x - min) / d + 0.5, with d and min before their
// fp16 rounding.
void quantize_block_q5_1(const float* x, BlockQ5_1& out) {
  const auto [lo, hi] = std::minmax_element(x, x + kQuantBlockElems);
  const float d = (*hi - *lo) / 31.0f;
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = fp32_to_fp16(d);
  out.m = fp32_to_fp16(*lo);
  uint8_t codes[kQuantBlockElems];
  for (int j = 0; j < kQuantBlockElems; ++j)
    codes[j] = static_cast<uint8_t>(std::min(31, static_cast<int>((x[j] - *lo) * inv_d + 0.5f)));
  store_q5_codes(codes, out);
}

template <class Block, void (*QuantizeBlock)(const float*, Block&), int BlockElems>
void quantize_blocks(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<Block*>(dst);
  for (int64_t b = 0; b < n / BlockElems; ++b) QuantizeBlock(src + b * BlockElems, blocks[b]);
}

}  // namespace

void dequantize_row(TensorType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case TensorType::F32:
      return dequantize<TensorType::F32>(src, dst, n);
    case TensorType::F16:
      return dequantize<TensorType::F16>(src, dst, n);
    case TensorType::Q4_0:
      return dequantize<TensorType::Q4_0>(src, dst, n);
    case TensorType::Q5_0:
      return dequantize<TensorType::Q5_0>(src, dst, n);
    case TensorType::Q5_1:
      return dequantize<TensorType::Q5_1>(src, dst, n);
    case TensorType::Q8_0:
      return dequantize<TensorType::Q8_0>(src, dst, n);
    case TensorType::Q2_K:
      return dequantize<TensorType::Q2_K>(src, dst, n);
    case TensorType::Q3_K:
      return dequantize<TensorType::Q3_K>(src, dst, n);
    case TensorType::Q4_K:
      return dequantize<TensorType::Q4_K>(src, dst, n);
    case TensorType::Q5_K:
      return dequantize<TensorType::Q5_K>(src, dst, n);
    case TensorType::Q6_K:
      return dequantize<TensorType::Q6_K>(src, dst, n);
    case TensorType::IQ4_NL:
      return dequantize<TensorType::IQ4_NL>(src, dst, n);
    case TensorType::IQ4_XS:
      return dequantize<TensorType::IQ4_XS>(src, dst, n);
    case TensorType::BF16:
      return dequantize<TensorType::BF16>(src, dst, n);
    case TensorType::MXFP4:
      return dequantize<TensorType::MXFP4>(src, dst, n);
  }
}

void quantize_row(TensorType t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case TensorType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case TensorType::F16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t k = 0; k < n; ++k) out[k] = fp32_to_fp16(src[k]);
      return;
    }
    case TensorType::Q4_0:
      return quantize_blocks<BlockQ4_0, quantize_block_q4_0, kQuantBlockElems>(src, dst, n);
    case TensorType::Q5_0:
      return quantize_blocks<BlockQ5_0, quantize_block_q5_0, kQuantBlockElems>(src, dst, n);
    case TensorType::Q5_1:
      return quantize_blocks<BlockQ5_1, quantize_block_q5_1, kQuantBlockElems>(src, dst, n);
    case TensorType::Q8_0:
      return quantize_blocks<BlockQ8_0, quantize_block_q8_0, kQuantBlockElems>(src, dst, n);
    case TensorType::Q2_K:
      return quantize_row_q2_k(src, static_cast<BlockQ2_K*>(dst), n);
    case TensorType::Q3_K:
      return quantize_row_q3_k(src, static_cast<BlockQ3_K*>(dst), n);
    case TensorType::Q4_K:
      return quantize_row_q4_k(src, static_cast<BlockQ4_K*>(dst), n);
    case TensorType::Q5_K:
      return quantize_row_q5_k(src, static_cast<BlockQ5_K*>(dst), n);
    case TensorType::Q6_K:
      return quantize_row_q6_k(src, static_cast<BlockQ6_K*>(dst), n);
    case TensorType::IQ4_NL:
      return quantize_row_iq4_nl(src, static_cast<BlockIQ4_NL*>(dst), n);
    case TensorType::IQ4_XS:
      return quantize_row_iq4_xs(src, static_cast<BlockIQ4_XS*>(dst), n);
    case TensorType::MXFP4:
      return quantize_row_mxfp4(src, static_cast<BlockMXFP4*>(dst), n);
    case TensorType::BF16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t k = 0; k < n; ++k) out[k] = fp32_to_bf16(src[k]);
      return;
    }
  }
}

}  // namespace kiln::kernels
