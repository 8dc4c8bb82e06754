// The integer block product (kernels/int8_dot.hpp) with AVX-512 VNNI: 16
// interleaved rows, one per 32-bit lane of a 512-bit register; vpdpbusd
// multiplies 4 unsigned by 4 signed bytes and adds the 4 products to a lane
// in one instruction.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels::arch {

struct Avx512VnniInt8Ops {
  static constexpr int kRows = 16;

  // The block's 8 vectors of 64 bytes (Q8_0: signed weights; Q4_0: the low
  // then the high nibbles of its 4 vectors) and, for Q8_0, 128 * each row's
  // sum of weights (see dot).
  struct Quants {
    __m512i w[8];
    __m512i sum128;
  };
  using Rows = __m512i;
  using Acc = __m512;

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    if constexpr (T == TensorType::Q4_0) {
      const __m512i low4 = _mm512_set1_epi8(0x0f);
      for (int v = 0; v < 4; ++v) {
        const __m512i packed = _mm512_loadu_si512(block + 64 * v);
        q.w[v] = _mm512_and_si512(packed, low4);
        q.w[v + 4] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
      }
    } else {
      const __m512i all128 = _mm512_set1_epi8(static_cast<char>(0x80));
      q.sum128 = _mm512_setzero_si512();
      for (int v = 0; v < 8; ++v) {
        q.w[v] = _mm512_loadu_si512(block + 64 * v);
        q.sum128 = _mm512_dpbusd_epi32(q.sum128, all128, q.w[v]);
      }
    }
    return q;
  }

  // A K-quant unit (kernels/interleave_k.hpp): Q4_0's nibbles, with the
  // high bits shifted above them (a negative shift is to the right).
  static __m512i shift(__m512i v, int left) {
    return left >= 0 ? _mm512_sll_epi32(v, _mm_cvtsi32_si128(left)) : _mm512_srl_epi32(v, _mm_cvtsi32_si128(-left));
  }
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q = decode<TensorType::Q4_0>(unit);
    if constexpr (T == TensorType::Q5_K) {
      const __m512i bits = _mm512_loadu_si512(unit + 4 * 64);
      const __m512i bit4 = _mm512_set1_epi8(0x10);
      for (int v = 0; v < 4; ++v) {
        q.w[v] = _mm512_or_si512(q.w[v], _mm512_and_si512(shift(bits, 4 - v), bit4));
        q.w[v + 4] = _mm512_or_si512(q.w[v + 4], _mm512_and_si512(shift(bits, -v), bit4));
      }
    } else if constexpr (T == TensorType::Q6_K) {
      const __m512i bits45 = _mm512_set1_epi8(0x30);
      for (int h = 0; h < 2; ++h) {
        const __m512i bits = _mm512_loadu_si512(unit + (4 + h) * 64);
        for (int v = 0; v < 4; ++v)
          q.w[4 * h + v] = _mm512_or_si512(q.w[4 * h + v], _mm512_and_si512(shift(bits, 4 - 2 * v), bits45));
      }
    }
    return q;
  }

  // Activation bytes x[at .. at + 3], XORed with `flip`, in every 32-bit lane.
  static __m512i broadcast4(const int8_t* x, int at, uint32_t flip) {
    uint32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return _mm512_set1_epi32(static_cast<int>(four ^ flip));
  }

  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    if constexpr (T == TensorType::Q4_0) {
      return dot_codes<CodeSpan::Both, 15>(w, x, offset);
    } else {
      __m512i sum = _mm512_setzero_si512();
      // Both signed: x + 128 (x XOR 0x80 as an unsigned byte) times w, then
      // 128 * sum(w) taken off; every step is an exact integer.
      for (int v = 0; v < 8; ++v) sum = _mm512_dpbusd_epi32(sum, broadcast4(x, 4 * v, 0x80808080u), w.w[v]);
      return _mm512_sub_epi32(sum, w.sum128);
    }
  }

  // Unsigned codes (Q4_0, K-quants) are the unsigned operand, activations
  // the signed one; any code of 8 bits fits.
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    __m512i sum = _mm512_setzero_si512();
    for (int v = 0; v < 4; ++v) {
      if constexpr (S != CodeSpan::High) sum = _mm512_dpbusd_epi32(sum, w.w[v], broadcast4(x, 4 * v, 0));
      if constexpr (S != CodeSpan::Low) sum = _mm512_dpbusd_epi32(sum, w.w[v + 4], broadcast4(x, 16 + 4 * v, 0));
    }
    return _mm512_sub_epi32(sum, _mm512_set1_epi32(offset));
  }

  static Acc zero() { return _mm512_setzero_ps(); }

  static Acc weight_scales(const uint16_t* d) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
  }
  static Acc scales(Acc w, float x_scale) { return _mm512_mul_ps(w, _mm512_set1_ps(x_scale)); }

  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    return _mm512_cvtepi32_ps(Signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes));
  }
  static Acc mul(Acc a, Acc b) { return _mm512_mul_ps(a, b); }
  static Acc fnma(Acc m, float x, Acc acc) { return _mm512_fnmadd_ps(m, _mm512_set1_ps(x), acc); }

  static Acc fma(Rows dots, Acc scale, Acc acc) { return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), scale, acc); }

  static __mmask16 first(int n_rows) { return static_cast<__mmask16>((1u << n_rows) - 1); }
  static void store(Acc a, float* y, int n_rows) { _mm512_mask_storeu_ps(y, first(n_rows), a); }
  static void add(Acc a, float* y, int n_rows) {
    const __mmask16 m = first(n_rows);
    _mm512_mask_storeu_ps(y, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y), a));
  }
};

}  // namespace kiln::kernels::arch
