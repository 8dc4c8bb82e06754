// The integer core of the quantized matmul: the dot product of 32 signed
// 8-bit weights with 32 signed 8-bit activations, scaled and accumulated in
// float.
//
// Numerics: a block's products are summed in 8 integer "lanes", lane l
// holding elements 4l .. 4l + 3 (the grouping AVX2's byte multiply-adds
// produce). Integer sums are exact, so every implementation gets the same
// lanes. Each lane is then converted to float and accumulated on its own,
// acc[l] = fma(lane[l], scale, acc[l]), block after block; the 8 accumulators
// are summed by one fixed tree at the end. The portable and the AVX2 code
// follow the same float steps, so their results are bit-identical (tests
// check this on x86, where both are compiled).
//
// Q4_0 weights (nibble - 8) are multiplied as the unsigned nibbles, and
// 8 * (the lane's sum of x) is subtracted: the same integers, fewer steps.
//
// An implementation is a struct of static functions over its own types (Qs:
// 32 bytes, Lanes: 8 int32, Acc: 8 float accumulators, Scale: a float),
// which dot_q8.hpp's tile is written against.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace kiln::kernels {

// Plain C++: runs anywhere.
struct PortableInt8Ops {
  struct Qs {  // 32 signed 8-bit values
    int8_t v[kQuantBlockElems];
  };
  struct Lanes {  // 8 integer sums
    int32_t v[8];
  };
  struct Acc {  // 8 float accumulators
    float v[8];
  };
  using Scale = float;

  static Qs load(const int8_t* p) {
    Qs q;
    std::memcpy(q.v, p, sizeof(q.v));
    return q;
  }
  static Qs weights(const BlockQ8_0& b) { return load(b.qs); }
  static Qs nibbles(const BlockQ4_0& b) {
    Qs q;
    for (int j = 0; j < kQuantBlockElems / 2; ++j) {
      q.v[j] = static_cast<int8_t>(b.qs[j] & 0x0f);
      q.v[j + kQuantBlockElems / 2] = static_cast<int8_t>(b.qs[j] >> 4);
    }
    return q;
  }
  // 8 * (x[4l] + .. + x[4l + 3]) in lane l: what the nibbles' offset of 8 adds.
  static Lanes offset8(const Qs& x) {
    Lanes sums;
    for (int l = 0; l < 8; ++l) sums.v[l] = 8 * (x.v[4 * l] + x.v[4 * l + 1] + x.v[4 * l + 2] + x.v[4 * l + 3]);
    return sums;
  }
  static Acc zero() { return {}; }
  static Scale scale(uint16_t fp16) { return fp16_to_fp32(fp16); }
  static Scale scale(float f) { return f; }
  static Scale mul(Scale a, Scale b) { return a * b; }

  static Lanes dot(const Qs& w, const Qs& x) {
    Lanes lanes;
    for (int l = 0; l < 8; ++l) {
      lanes.v[l] = 0;
      for (int j = 4 * l; j < 4 * l + 4; ++j) lanes.v[l] += int32_t{w.v[j]} * int32_t{x.v[j]};
    }
    return lanes;
  }
  static Acc fma(const Lanes& lanes, Scale scale, Acc acc) {
    for (int l = 0; l < 8; ++l) acc.v[l] = std::fma(static_cast<float>(lanes.v[l]), scale, acc.v[l]);
    return acc;
  }

  // acc + scale * (lanes of w . x), for signed weights w.
  static Acc fma_dot(const Qs& w, const Qs& x, Scale scale, Acc acc) { return fma(dot(w, x), scale, acc); }

  // The same for Q4_0 weights nibble - 8, given nibbles and offset8(x).
  static Acc fma_dot_q4(const Qs& nibbles, const Qs& x, const Lanes& x_offset8, Scale scale, Acc acc) {
    Lanes lanes = dot(nibbles, x);
    for (int l = 0; l < 8; ++l) lanes.v[l] -= x_offset8.v[l];
    return fma(lanes, scale, acc);
  }

  // The order AVX2 reduces a register in: the two halves, then pairs.
  static float total(const Acc& a) {
    float half[4];
    for (int i = 0; i < 4; ++i) half[i] = a.v[i] + a.v[i + 4];
    return (half[0] + half[2]) + (half[1] + half[3]);
  }
};

#if defined(__AVX2__) && defined(__FMA__)
struct Avx2Int8Ops {
  using Qs = __m256i;
  using Lanes = __m256i;
  using Acc = __m256;
  using Scale = __m256;  // one float in every lane

  static Qs load(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Qs weights(const BlockQ8_0& b) { return load(b.qs); }
  // The 16 bytes in both halves, the upper half shifted right by 4, masked:
  // low nibbles (elements 0..15) then high nibbles (elements 16..31).
  static Qs nibbles(const BlockQ4_0& b) {
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
    const __m256i shifted = _mm256_srlv_epi64(both, _mm256_set_epi64x(4, 4, 0, 0));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0f));
  }
  static Lanes offset8(Qs x) { return _mm256_slli_epi32(dot_unsigned(_mm256_set1_epi8(1), x), 3); }
  static Acc zero() { return _mm256_setzero_ps(); }
  // Converting the half in every lane broadcasts it for free.
  static Scale scale(uint16_t fp16) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<int16_t>(fp16))); }
  static Scale scale(float f) { return _mm256_set1_ps(f); }
  static Scale mul(Scale a, Scale b) { return _mm256_mul_ps(a, b); }

  // Lanes of u . x for unsigned bytes u <= 128 (as Q8_0's |-128| is).
  static Lanes dot_unsigned(__m256i u, Qs x) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, x);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, x);
#else
    // Pairs of products fit int16: u <= 128 and activations never hold -128,
    // so |pair| <= 2 * 128 * 127 < 32768 and nothing saturates.
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
#endif
  }
  static Acc fma(Lanes lanes, Scale scale, Acc acc) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(lanes), scale, acc); }

  static Acc fma_dot(Qs w, Qs x, Scale scale, Acc acc) {
    // The byte multiply takes one unsigned operand: |w| times x with w's sign.
    return fma(dot_unsigned(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), scale, acc);
  }

  // Nibbles are unsigned already: no sign juggling, one integer subtraction.
  static Acc fma_dot_q4(Qs nibbles, Qs x, Lanes x_offset8, Scale scale, Acc acc) {
    return fma(_mm256_sub_epi32(dot_unsigned(nibbles, x), x_offset8), scale, acc);
  }

  static float total(Acc a) {
    const __m128 half = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
  }
};
using NativeInt8Ops = Avx2Int8Ops;
#else
using NativeInt8Ops = PortableInt8Ops;
#endif

}  // namespace kiln::kernels
