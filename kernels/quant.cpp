#include "kernels/quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/bf16.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quant_k.hpp"
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

}  // namespace

void dequantize_row(TensorType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case TensorType::F32:
      return dequantize<TensorType::F32>(src, dst, n);
    case TensorType::F16:
      return dequantize<TensorType::F16>(src, dst, n);
    case TensorType::Q4_0:
      return dequantize<TensorType::Q4_0>(src, dst, n);
    case TensorType::Q8_0:
      return dequantize<TensorType::Q8_0>(src, dst, n);
    case TensorType::Q4_K:
      return dequantize<TensorType::Q4_K>(src, dst, n);
    case TensorType::Q5_K:
      return dequantize<TensorType::Q5_K>(src, dst, n);
    case TensorType::Q6_K:
      return dequantize<TensorType::Q6_K>(src, dst, n);
    case TensorType::BF16:
      return dequantize<TensorType::BF16>(src, dst, n);
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
    case TensorType::Q4_0: {
      auto* blocks = static_cast<BlockQ4_0*>(dst);
      for (int64_t b = 0; b < n / kQuantBlockElems; ++b) quantize_block_q4_0(src + b * kQuantBlockElems, blocks[b]);
      return;
    }
    case TensorType::Q8_0: {
      auto* blocks = static_cast<BlockQ8_0*>(dst);
      for (int64_t b = 0; b < n / kQuantBlockElems; ++b) quantize_block_q8_0(src + b * kQuantBlockElems, blocks[b]);
      return;
    }
    case TensorType::Q4_K:
      return quantize_row_q4_k(src, static_cast<BlockQ4_K*>(dst), n);
    case TensorType::Q5_K:
      return quantize_row_q5_k(src, static_cast<BlockQ5_K*>(dst), n);
    case TensorType::Q6_K:
      return quantize_row_q6_k(src, static_cast<BlockQ6_K*>(dst), n);
    case TensorType::BF16: {
      auto* out = static_cast<uint16_t*>(dst);
      for (int64_t k = 0; k < n; ++k) out[k] = fp32_to_bf16(src[k]);
      return;
    }
  }
}

}  // namespace kiln::kernels
