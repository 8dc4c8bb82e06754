#include "tests/support/reference_dequant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "engine/error/error.hpp"

namespace kiln::test {

namespace {

// GGUF tensor type ids (ggml_type) and their block layouts.
enum GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14,
  IQ4_NL = 20, IQ4_XS = 23, BF16 = 30, MXFP4 = 39
};
constexpr int64_t kQ4_0Bytes = 2 + 16;             // d; 32 nibbles
constexpr int64_t kQ5_0Bytes = 2 + 4 + 16;         // d; 32 fifth bits; 32 nibbles
constexpr int64_t kQ5_1Bytes = 2 + 2 + 4 + 16;     // d, m; 32 fifth bits; 32 nibbles
constexpr int64_t kQ8_0Bytes = 2 + 32;             // d; 32 int8
constexpr int64_t kIQ4_NLBytes = 2 + 16;           // d; 32 nibbles indexing the codebook
constexpr int64_t kMXFP4Bytes = 1 + 16;            // E8M0 exponent; 32 nibbles, each an E2M1 float
constexpr int64_t kQ2_KBytes = 16 + 64 + 2 + 2;    // 16 x 4-bit scale and min, 256 x 2 bits, d, dmin
constexpr int64_t kQ3_KBytes = 32 + 64 + 12 + 2;   // 256 third bits, 256 x 2 bits, 16 x 6-bit scale, d
constexpr int64_t kIQ4_XSBytes = 2 + 2 + 4 + 128;  // d, 8 x 6-bit scale (top 2 bits, low 4 bits), 256 nibbles
constexpr int64_t kQ4_KBytes = 2 + 2 + 12 + 128;   // d, dmin, 8 x 6-bit scale and min, 256 nibbles
constexpr int64_t kQ5_KBytes = 2 + 2 + 12 + 32 + 128;  // ... plus 256 fifth bits
constexpr int64_t kQ6_KBytes = 128 + 64 + 16 + 2;  // 256 low nibbles, 256 x 2 high bits, 16 int8 scales, d

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
float half_at(const uint8_t* p) { return half_to_float(u16(p)); }

// IQ4_NL's and IQ4_XS's 16 values, the codes' meaning.
constexpr int kIq4Codebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// An E2M1 float (MXFP4's elements): sign, 2 exponent bits (bias 1), 1
// mantissa bit; exponent 0 is the subnormal 0 or 0.5.
float e2m1(int code) {
  const int exponent = code >> 1 & 3, mantissa = code & 1;
  const float magnitude =
      exponent == 0 ? 0.5f * float(mantissa) : std::ldexp(1.0f + 0.5f * float(mantissa), exponent - 1);
  return code & 8 ? -magnitude : magnitude;
}

// A 32-element block of 4-bit codes (Q4_0, Q5_0, Q5_1, IQ4_NL, MXFP4, each 32 of
// IQ4_XS): element j < 16 is the low nibble of byte j, element j + 16 its
// high nibble.
int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4; }

// Q5_0 and Q5_1: the fifth bit of element j is bit j of the 4 little-endian bytes qh.
int five_bits(const uint8_t* qh, const uint8_t* qs, int j) { return nibble(qs, j) | ((qh[j / 8] >> (j % 8)) & 1) << 4; }

// Q2_K and Q3_K: 2 bits of element j (0..255). Half h = j / 128 owns bytes
// 32h..32h+31; its 32-element quarter r holds bits 2r, 2r+1 of those bytes.
int two_bits(const uint8_t* qs, int j) { return (qs[32 * (j / 128) + j % 32] >> (2 * ((j % 128) / 32))) & 3; }

// Q2_K: sub-block k (16 elements) has scale scales[k] & 15 and min scales[k] >> 4.
void q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = half_at(b + 80), dmin = half_at(b + 82);
  for (int j = 0; j < 256; ++j)
    y[j] = d * float(scales[j / 16] & 15) * float(two_bits(qs, j)) - dmin * float(scales[j / 16] >> 4);
}

// Q3_K: element j's third bit is bit j / 32 of hmask[j % 32]; its code less 4
// is scaled by sub-block k's 6-bit scale less 32, whose low 4 bits are the
// low (k < 8) or high nibble of byte k % 8 and top 2 bits are bits
// 2 (k / 4), +1 of byte 8 + k % 4.
void q3_k(const uint8_t* b, float* y) {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* s = b + 96;
  const float d = half_at(b + 108);
  for (int j = 0; j < 256; ++j) {
    const int k = j / 16;
    const int scale = (((s[k % 8] >> (k < 8 ? 0 : 4)) & 15) | ((s[8 + k % 4] >> (2 * (k / 4))) & 3) << 4) - 32;
    const int code = two_bits(qs, j) | ((hmask[j % 32] >> (j / 32)) & 1) << 2;
    y[j] = d * float(scale) * float(code - 4);
  }
}

// IQ4_XS: 8 sub-blocks of 32, sub-block k with the 6-bit scale (nibble k % 2
// of byte 4 + k / 2, and bits 2k, 2k+1 of the 16-bit word at byte 2 on top)
// less 32, and its nibbles in the 16 bytes from 8 + 16k.
void iq4_xs(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const int high_bits = u16(b + 2);
  for (int k = 0; k < 8; ++k) {
    const int scale = (((b[4 + k / 2] >> (4 * (k % 2))) & 15) | ((high_bits >> (2 * k)) & 3) << 4) - 32;
    for (int j = 0; j < 32; ++j) y[32 * k + j] = d * float(scale) * float(kIq4Codebook[nibble(b + 8 + 16 * k, j)]);
  }
}

// Q4_K/Q5_K: scale and min of sub-block j (0..7) from the 12 packed bytes.
// Sub-blocks 0-3 keep 6 bits in the low bits of bytes j and j + 4; sub-blocks
// 4-7 have their low 4 bits in byte j + 4 and their top 2 bits in the top
// bits of bytes j - 4 (scale) and j (min).
void scale_and_min(const uint8_t* s, int j, int& scale, int& min) {
  if (j < 4) {
    scale = s[j] & 63;
    min = s[j + 4] & 63;
  } else {
    scale = (s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4;
    min = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// Q4_K and Q5_K: 4 chunks of 64 elements; in chunk c the first 32 take the
// low nibbles of qs[32c..32c+31] (sub-block 2c), the next 32 the high
// nibbles (sub-block 2c + 1). Q5_K's fifth bit of element l of sub-block k
// is bit k of qh[l].
void k_quant_4_or_5(const uint8_t* b, bool five_bits, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = five_bits ? b + 48 : b + 16;
  for (int sub = 0; sub < 8; ++sub) {
    int scale = 0, min = 0;
    scale_and_min(scales, sub, scale, min);
    for (int l = 0; l < 32; ++l) {
      const uint8_t byte = qs[32 * (sub / 2) + l];
      int q = sub % 2 == 0 ? byte & 0x0F : byte >> 4;
      if (five_bits) q |= ((qh[l] >> sub) & 1) << 4;
      y[32 * sub + l] = d * float(scale) * float(q) - dmin * float(min);
    }
  }
}

// Q6_K: two halves of 128 elements. In half h, element 32r + l (r = 0..3,
// l = 0..31) has its low 4 bits in ql[64h + l + 32(r % 2)] (low nibble for
// r < 2, high nibble otherwise) and its top 2 bits at bit 2r of qh[32h + l];
// it is signed by subtracting 32 and scaled by scales[8h + 2r + l / 16].
void q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int h = 0; h < 2; ++h)
    for (int r = 0; r < 4; ++r)
      for (int l = 0; l < 32; ++l) {
        const uint8_t low_byte = ql[64 * h + l + 32 * (r % 2)];
        const int low = r < 2 ? low_byte & 0x0F : low_byte >> 4;
        const int high = (qh[32 * h + l] >> (2 * r)) & 3;
        y[128 * h + 32 * r + l] = d * float(scales[8 * h + 2 * r + l / 16]) * float((low | high << 4) - 32);
      }
}

int64_t block_bytes(uint32_t type) {
  switch (type) {
    case Q4_0: return kQ4_0Bytes;
    case Q5_0: return kQ5_0Bytes;
    case Q5_1: return kQ5_1Bytes;
    case Q8_0: return kQ8_0Bytes;
    case IQ4_NL: return kIQ4_NLBytes;
    case MXFP4: return kMXFP4Bytes;
    case Q2_K: return kQ2_KBytes;
    case Q3_K: return kQ3_KBytes;
    case IQ4_XS: return kIQ4_XSBytes;
    case Q4_K: return kQ4_KBytes;
    case Q5_K: return kQ5_KBytes;
    case Q6_K: return kQ6_KBytes;
    default: return 0;
  }
}

}  // namespace

float half_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  const float sign = h & 0x8000 ? -1.0f : 1.0f;
  if (exponent == 0) return sign * std::ldexp(float(mantissa), -24);  // zero or subnormal
  if (exponent == 31) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(float(mantissa | 0x400), exponent - 25);
}

float round_to_half(float x) {
  if (!std::isfinite(x) || x == 0) return x;
  if (std::fabs(x) >= 65520.0f) return std::copysign(INFINITY, x);  // beyond half the last step past 65504
  int e = 0;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e): 11 significant bits give steps of 2^(e-11), at least 2^-24
  const double step = std::ldexp(1.0, std::max(e - 11, -24));
  return static_cast<float>(std::nearbyint(double(x) / step) * step);
}

std::vector<float> reference_dequantize(uint32_t type, const uint8_t* data, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  switch (type) {
    case F32:
      std::memcpy(y.data(), data, size_t(n) * 4);
      return y;
    case F16:
      for (int64_t i = 0; i < n; ++i) y[i] = half_at(data + 2 * i);
      return y;
    case BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t bits = uint32_t(u16(data + 2 * i)) << 16;
        std::memcpy(&y[i], &bits, 4);
      }
      return y;
    default:
      break;
  }
  const int64_t bytes = block_bytes(type);
  const int64_t elems =
      type == Q4_0 || type == Q5_0 || type == Q5_1 || type == Q8_0 || type == IQ4_NL || type == MXFP4 ? 32 : 256;
  if (bytes == 0) throw Error("reference dequantizer: GGUF type " + std::to_string(type) + " is not one it decodes");
  if (n % elems != 0) throw Error("reference dequantizer: " + std::to_string(n) + " elements are not whole blocks");
  for (int64_t blk = 0; blk < n / elems; ++blk) {
    const uint8_t* b = data + blk * bytes;
    float* out = y.data() + blk * elems;
    switch (type) {
      case Q8_0:
        for (int j = 0; j < 32; ++j) out[j] = half_at(b) * float(static_cast<int8_t>(b[2 + j]));
        break;
      case Q4_0:  // element j: low nibble of byte j (j < 16) or high nibble of byte j - 16, minus 8
        for (int j = 0; j < 16; ++j) {
          out[j] = half_at(b) * float((b[2 + j] & 0x0F) - 8);
          out[j + 16] = half_at(b) * float((b[2 + j] >> 4) - 8);
        }
        break;
      case Q5_0:  // five bits less 16
        for (int j = 0; j < 32; ++j) out[j] = half_at(b) * float(five_bits(b + 2, b + 6, j) - 16);
        break;
      case Q5_1:  // d * five bits + m
        for (int j = 0; j < 32; ++j) out[j] = half_at(b) * float(five_bits(b + 4, b + 8, j)) + half_at(b + 2);
        break;
      case IQ4_NL:
        for (int j = 0; j < 32; ++j) out[j] = half_at(b) * float(kIq4Codebook[nibble(b + 2, j)]);
        break;
      case MXFP4:  // 2^(e - 127) times the E2M1 value
        for (int j = 0; j < 32; ++j) out[j] = std::ldexp(e2m1(nibble(b + 1, j)), int(b[0]) - 127);
        break;
      case Q2_K: q2_k(b, out); break;
      case Q3_K: q3_k(b, out); break;
      case IQ4_XS: iq4_xs(b, out); break;
      case Q4_K: k_quant_4_or_5(b, false, out); break;
      case Q5_K: k_quant_4_or_5(b, true, out); break;
      default: q6_k(b, out); break;
    }
  }
  return y;
}

std::vector<float> reference_dequantize(const GgufTensor& t) {
  return reference_dequantize(t.ggml_type, t.data, t.n_elements());
}

double reference_k_quant_step(const GgufTensor& t, int64_t i) {
  const int64_t bytes = block_bytes(t.ggml_type);
  if (t.ggml_type != Q4_K && t.ggml_type != Q5_K && t.ggml_type != Q6_K)
    throw Error("reference_k_quant_step: tensor '" + t.name + "' is not a K-quant");
  const uint8_t* b = t.data + (i / 256) * bytes;
  const int j = static_cast<int>(i % 256);
  if (t.ggml_type == Q6_K) {
    // Element j sits in half j / 128, row (j % 128) / 32, column l = j % 32.
    const int h = j / 128, r = (j % 128) / 32, l = j % 32;
    return std::fabs(double(half_at(b + 208)) * static_cast<int8_t>(b[192 + 8 * h + 2 * r + l / 16]));
  }
  int scale = 0, min = 0;
  scale_and_min(b + 4, j / 32, scale, min);
  return double(half_at(b)) * scale;
}

}  // namespace kiln::test
