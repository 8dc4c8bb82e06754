// The integer block product (kernels/int8_dot.hpp) with aarch64 NEON and the
// dot-product extension: 8 interleaved rows in two 128-bit halves of 4 rows;
// sdot multiplies 4 signed by 4 signed bytes and adds the 4 products to a lane.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

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

  // Activation bytes x[at .. at + 3] in every 32-bit lane.
  static int8x16_t broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return vreinterpretq_s8_s32(vdupq_n_s32(four));
  }

  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    Rows out;
    for (int h = 0; h < 2; ++h) {
      int32x4_t sum = vdupq_n_s32(0);
      for (int v = 0; v < 8; ++v) {
        // Q4_0's high nibbles (vectors 4..7) pair with activations 16 + 4v'.
        const int at = T == TensorType::Q4_0 && v >= 4 ? 16 + 4 * (v - 4) : 4 * v;
        sum = vdotq_s32(sum, w.w[v][h], broadcast4(x, at));
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
