// The integer block product (kernels/int8_dot.hpp) with aarch64 NEON and the
// dot-product extension: 8 interleaved rows in two 128-bit halves of 4 rows;
// sdot multiplies 4 signed by 4 signed bytes and adds the 4 products to a lane.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels::arch {

struct NeonDotInt8Ops {
  static constexpr int kRows = 8;

  // The block's 8 vectors of 32 bytes (Q8_0: the weights; Q4_0: the low then
  // the high nibbles of its 4 vectors), each as rows 0-3 and rows 4-7.
  struct Quants {
    int8x16_t w[8][2];
  };
  struct Rows {
    int32x4_t h[2];
  };
  struct Acc {
    float32x4_t h[2];
  };

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    for (int h = 0; h < 2; ++h) {
      if constexpr (T == TensorType::Q4_0) {
        for (int v = 0; v < 4; ++v) {
          const uint8x16_t packed = vld1q_u8(block + 32 * v + 16 * h);
          q.w[v][h] = vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(0x0f)));
          q.w[v + 4][h] = vreinterpretq_s8_u8(vshrq_n_u8(packed, 4));
        }
      } else {
        for (int v = 0; v < 8; ++v) q.w[v][h] = vld1q_s8(reinterpret_cast<const int8_t*>(block) + 32 * v + 16 * h);
      }
    }
    return q;
  }

  // A K-quant unit (kernels/interleave_k.hpp): Q4_0's nibbles, with the
  // high bits shifted above them (vshlq shifts right by a negative count).
  static int8x16_t high_bits(const uint8_t* bits, int left, uint8_t mask) {
    const uint32x4_t shifted = vshlq_u32(vreinterpretq_u32_u8(vld1q_u8(bits)), vdupq_n_s32(left));
    return vreinterpretq_s8_u8(vandq_u8(vreinterpretq_u8_u32(shifted), vdupq_n_u8(mask)));
  }
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q = decode<TensorType::Q4_0>(unit);
    for (int h = 0; h < 2; ++h) {
      if constexpr (T == TensorType::Q5_K) {
        const uint8_t* bits = unit + 4 * 32 + 16 * h;
        for (int v = 0; v < 4; ++v) {
          q.w[v][h] = vorrq_s8(q.w[v][h], high_bits(bits, 4 - v, 0x10));
          q.w[v + 4][h] = vorrq_s8(q.w[v + 4][h], high_bits(bits, -v, 0x10));
        }
      } else if constexpr (T == TensorType::Q6_K) {
        for (int half = 0; half < 2; ++half) {
          const uint8_t* bits = unit + (4 + half) * 32 + 16 * h;
          for (int v = 0; v < 4; ++v)
            q.w[4 * half + v][h] = vorrq_s8(q.w[4 * half + v][h], high_bits(bits, 4 - 2 * v, 0x30));
        }
      }
    }
    return q;
  }

  // Activation bytes x[at .. at + 3] in every 32-bit lane.
  static int8x16_t broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return vreinterpretq_s8_s32(vdupq_n_s32(four));
  }

  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    if constexpr (T == TensorType::Q4_0) return dot_codes<CodeSpan::Both, 15>(w, x, offset);
    Rows out;
    for (int h = 0; h < 2; ++h) {
      int32x4_t sum = vdupq_n_s32(0);
      for (int v = 0; v < 8; ++v) sum = vdotq_s32(sum, w.w[v][h], broadcast4(x, 4 * v));
      out.h[h] = vsubq_s32(sum, vdupq_n_s32(offset));
    }
    return out;
  }

  // Unsigned codes (Q4_0, K-quants; at most 63, so positive as signed bytes)
  // times x: vectors 0..3 hold columns 4v.., vectors 4..7 columns 16 + 4v'.
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    static_assert(MaxCode <= 127);
    Rows out;
    for (int h = 0; h < 2; ++h) {
      int32x4_t sum = vdupq_n_s32(0);
      for (int v = 0; v < 4; ++v) {
        if constexpr (S != CodeSpan::High) sum = vdotq_s32(sum, w.w[v][h], broadcast4(x, 4 * v));
        if constexpr (S != CodeSpan::Low) sum = vdotq_s32(sum, w.w[v + 4][h], broadcast4(x, 16 + 4 * v));
      }
      out.h[h] = vsubq_s32(sum, vdupq_n_s32(offset));
    }
    return out;
  }

  static Acc zero() { return {{vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}}; }

  static Acc weight_scales(const uint16_t* d) {
    return {{vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(d))), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(d + 4)))}};
  }
  static Acc scales(const Acc& w, float x_scale) {
    return {{vmulq_n_f32(w.h[0], x_scale), vmulq_n_f32(w.h[1], x_scale)}};
  }

  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    int16x8_t wide;
    if constexpr (Signed)
      wide = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(s)));
    else
      wide = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(s)));
    return {{vcvtq_f32_s32(vmovl_s16(vget_low_s16(wide))), vcvtq_f32_s32(vmovl_s16(vget_high_s16(wide)))}};
  }
  static Acc mul(const Acc& a, const Acc& b) { return {{vmulq_f32(a.h[0], b.h[0]), vmulq_f32(a.h[1], b.h[1])}}; }
  // acc - m * x, fused (vfmsq: a - b * c).
  static Acc fnma(const Acc& m, float x, Acc acc) {
    for (int h = 0; h < 2; ++h) acc.h[h] = vfmsq_f32(acc.h[h], m.h[h], vdupq_n_f32(x));
    return acc;
  }

  static Acc fma(const Rows& dots, const Acc& scale, Acc acc) {
    for (int h = 0; h < 2; ++h) acc.h[h] = vfmaq_f32(acc.h[h], vcvtq_f32_s32(dots.h[h]), scale.h[h]);
    return acc;
  }

  static void store(const Acc& a, float* y, int n_rows) {
    float lanes[kRows];
    vst1q_f32(lanes, a.h[0]);
    vst1q_f32(lanes + 4, a.h[1]);
    std::memcpy(y, lanes, sizeof(float) * n_rows);
  }
  static void add(const Acc& a, float* y, int n_rows) {
    float lanes[kRows];
    vst1q_f32(lanes, a.h[0]);
    vst1q_f32(lanes + 4, a.h[1]);
    for (int r = 0; r < n_rows; ++r) y[r] += lanes[r];
  }
};

}  // namespace kiln::kernels::arch
