// The integer block product (kernels/int8_dot.hpp) with aarch64 NEON and the
// dot-product extension: 8 interleaved rows in two 128-bit halves of 4 rows;
// sdot multiplies 4 signed by 4 signed bytes and adds the 4 products to a lane.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/codebook.hpp"

namespace kiln::kernels::arch {

struct NeonDotInt8Ops {
  static constexpr int kRows = 8;
  static constexpr int kVector = 32;  // bytes of one interleaved vector
  // A prompt's tile of tokens (kernels/matmul.hpp), token by token; the
  // tokens left after whole tiles go one by one.
  static constexpr int kTokenTile = 6;
  static constexpr int kRestTile = kTokenTile;

  // The block's 8 code vectors (kernels/interleave_unit.hpp: vector v holds
  // elements 4v.., vector 4 + v elements 16 + 4v..), each as rows 0-3 and
  // rows 4-7: Q8_0's and the codebook types' signed weights, or the other types' unsigned
  // codes (at most 63, so positive as signed bytes).
  struct Quants {
    int8x16_t w[8][2];
  };
  struct Rows {
    int32x4_t h[2];
  };
  struct Acc {
    float32x4_t h[2];
  };

  // Bytes of half h (rows 4h .. 4h + 3) of the vector at p, shifted left by
  // `left` bits in each 32-bit lane (vshlq shifts right by a negative count)
  // and masked.
  static int8x16_t shifted(const uint8_t* p, int h, int left, uint8_t mask) {
    const uint32x4_t lanes = vshlq_u32(vreinterpretq_u32_u8(vld1q_u8(p + 16 * h)), vdupq_n_s32(left));
    return vreinterpretq_s8_u8(vandq_u8(vreinterpretq_u8_u32(lanes), vdupq_n_u8(mask)));
  }

  // The parts of interleave_unit.hpp: nibble vectors become the codes' low
  // 4 bits; crumb and bit vectors are ORed in at bit `at` of each code.
  static void nibbles(const uint8_t* at, Quants& q) {
    for (int h = 0; h < 2; ++h)
      for (int v = 0; v < 4; ++v) {
        const uint8x16_t packed = vld1q_u8(at + kVector * v + 16 * h);
        q.w[v][h] = vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(0x0f)));
        q.w[v + 4][h] = vreinterpretq_s8_u8(vshrq_n_u8(packed, 4));
      }
  }
  static void or_crumbs(const uint8_t* crumbs, int at, Quants& q) {
    const auto mask = static_cast<uint8_t>(3 << at);
    for (int h = 0; h < 2; ++h)
      for (int half = 0; half < 2; ++half)
        for (int v = 0; v < 4; ++v)
          q.w[4 * half + v][h] = vorrq_s8(q.w[4 * half + v][h], shifted(crumbs + kVector * half, h, at - 2 * v, mask));
  }
  static void or_bits(const uint8_t* bit_vector, int at, Quants& q) {
    const auto mask = static_cast<uint8_t>(1 << at);
    for (int h = 0; h < 2; ++h)
      for (int v = 0; v < 4; ++v) {
        q.w[v][h] = vorrq_s8(q.w[v][h], shifted(bit_vector, h, at - v, mask));
        q.w[v + 4][h] = vorrq_s8(q.w[v + 4][h], shifted(bit_vector, h, at - 4 - v, mask));
      }
  }
  // A codebook type's nibbles looked up with tbl, as signed weights.
  template <TensorType T>
  static void codebook(Quants& q) {
    const int8x16_t table = vld1q_s8(codebook_values<T>());
    for (auto& vector : q.w)
      for (auto& half : vector) half = vqtbl1q_s8(table, vreinterpretq_u8_s8(half));
  }

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    if constexpr (T == TensorType::Q8_0) {
      for (int h = 0; h < 2; ++h)
        for (int v = 0; v < 8; ++v) q.w[v][h] = vld1q_s8(reinterpret_cast<const int8_t*>(block) + kVector * v + 16 * h);
    } else {
      nibbles(block, q);
      if constexpr (T == TensorType::Q5_0 || T == TensorType::Q5_1) or_bits(block + 4 * kVector, 4, q);
      if constexpr (is_codebook_type(T)) codebook<T>(q);
    }
    return q;
  }

  // A super-block type's unit (kernels/interleave_k.hpp).
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q;
    if constexpr (T == TensorType::Q2_K || T == TensorType::Q3_K) {
      for (auto& vector : q.w)
        for (auto& half : vector) half = vdupq_n_s8(0);
      or_crumbs(unit, 0, q);
      if constexpr (T == TensorType::Q3_K) or_bits(unit + 2 * kVector, 2, q);
    } else {
      nibbles(unit, q);
      if constexpr (T == TensorType::Q5_K) or_bits(unit + 4 * kVector, 4, q);
      if constexpr (T == TensorType::Q6_K) or_crumbs(unit + 4 * kVector, 4, q);
      if constexpr (T == TensorType::IQ4_XS) codebook<T>(q);
    }
    return q;
  }

  // Activation bytes x[at .. at + 3] in every 32-bit lane.
  static int8x16_t broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return vreinterpretq_s8_s32(vdupq_n_s32(four));
  }

  // Signed weights (Q8_0, the codebook types) are multiplied as they are, without an
  // offset; unsigned codes less the offset.
  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    if constexpr (!has_signed_weights(T)) return dot_codes<CodeSpan::Both, 31>(w, x, offset);
    Rows out;
    for (int h = 0; h < 2; ++h) {
      int32x4_t sum = vdupq_n_s32(0);
      for (int v = 0; v < 8; ++v) sum = vdotq_s32(sum, w.w[v][h], broadcast4(x, 4 * v));
      out.h[h] = sum;
    }
    return out;
  }

  // Unsigned codes (at most 127, so positive as signed bytes) times x:
  // vectors 0..3 hold columns 4v.., vectors 4..7 columns 16 + 4v'.
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
  // 2^(e - 127) from each row's E8M0 byte (e8m0_bits in quant_mxfp4.hpp).
  static Acc e8m0_scales(const uint8_t* e) {
    const uint16x8_t wide = vmovl_u8(vld1_u8(e));
    const uint32x4_t smallest = vdupq_n_u32(0x00400000);
    const uint32x4_t low = vmaxq_u32(vshlq_n_u32(vmovl_u16(vget_low_u16(wide)), 23), smallest);
    const uint32x4_t high = vmaxq_u32(vshlq_n_u32(vmovl_u16(vget_high_u16(wide)), 23), smallest);
    return {{vreinterpretq_f32_u32(low), vreinterpretq_f32_u32(high)}};
  }
  static Acc scales(const Acc& w, float x_scale) {
    return {{vmulq_n_f32(w.h[0], x_scale), vmulq_n_f32(w.h[1], x_scale)}};
  }

  static Acc widen(int16x8_t wide) {
    return {{vcvtq_f32_s32(vmovl_s16(vget_low_s16(wide))), vcvtq_f32_s32(vmovl_s16(vget_high_s16(wide)))}};
  }
  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    if constexpr (Signed) return widen(vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(s))));
    return widen(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(s))));
  }
  template <bool High>
  static Acc nibble_scales(const uint8_t* s) {
    const uint8x8_t bytes = vld1_u8(s);
    return widen(vreinterpretq_s16_u16(vmovl_u8(High ? vshr_n_u8(bytes, 4) : vand_u8(bytes, vdup_n_u8(0x0f)))));
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
    for (int r = 0; r < n_rows; ++r) y[r] = lanes[r];
  }
  static void add(const Acc& a, float* y, int n_rows) {
    float lanes[kRows];
    vst1q_f32(lanes, a.h[0]);
    vst1q_f32(lanes + 4, a.h[1]);
    for (int r = 0; r < n_rows; ++r) y[r] += lanes[r];
  }
};

}  // namespace kiln::kernels::arch
