// The integer block product (kernels/int8_dot.hpp) with AVX-512 VNNI: 16
// interleaved rows, one per 32-bit lane of a 512-bit register; vpdpbusd
// multiplies 4 unsigned by 4 signed bytes and adds the 4 products to a lane
// in one instruction.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/codebook.hpp"

namespace kiln::kernels::arch {

struct Avx512VnniInt8Ops {
  static constexpr int kRows = 16;
  static constexpr int kVector = 64;  // bytes of one interleaved vector
  // A prompt's tile of tokens (kernels/matmul.hpp): dot_tokens keeps a chain
  // and a float sum per token, with the 8 code vectors in 32 registers.
  static constexpr int kTokenTile = 12;
  // The tokens left after whole tiles: tiles of 4, then one by one.
  static constexpr int kRestTile = 4;

  // The block's 8 code vectors (kernels/interleave_unit.hpp: vector v holds
  // elements 4v.., vector 4 + v elements 16 + 4v..), unsigned: Q8_0's and
  // the codebook types' are their signed values + 128 (code_bias), the other
  // types' their codes. So every type is the unsigned operand of vpdpbusd
  // and the activations the signed one, broadcast from memory as they are.
  struct Quants {
    __m512i w[8];
  };
  using Rows = __m512i;
  using Acc = __m512;

  static __m512i load(const uint8_t* p) { return _mm512_loadu_si512(p); }

  // v shifted left by `left` bits in each 32-bit lane (right when negative).
  static __m512i shift(__m512i v, int left) {
    return left >= 0 ? _mm512_sll_epi32(v, _mm_cvtsi32_si128(left)) : _mm512_srl_epi32(v, _mm_cvtsi32_si128(-left));
  }

  // The parts of interleave_unit.hpp: nibble vectors become the codes' low
  // 4 bits; crumb and bit vectors are ORed in at bit `at` of each code.
  static void nibbles(const uint8_t* at, Quants& q) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int v = 0; v < 4; ++v) {
      const __m512i packed = load(at + kVector * v);
      q.w[v] = _mm512_and_si512(packed, low4);
      q.w[v + 4] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
    }
  }
  static void or_crumbs(const uint8_t* crumbs, int at, Quants& q) {
    const __m512i mask = _mm512_set1_epi8(static_cast<char>(3 << at));
    for (int h = 0; h < 2; ++h) {
      const __m512i bits = load(crumbs + kVector * h);
      for (int v = 0; v < 4; ++v)
        q.w[4 * h + v] = _mm512_or_si512(q.w[4 * h + v], _mm512_and_si512(shift(bits, at - 2 * v), mask));
    }
  }
  static void or_bits(const uint8_t* bit_vector, int at, Quants& q) {
    const __m512i bits = load(bit_vector);
    const __m512i mask = _mm512_set1_epi8(static_cast<char>(1 << at));
    for (int v = 0; v < 4; ++v) {
      q.w[v] = _mm512_or_si512(q.w[v], _mm512_and_si512(shift(bits, at - v), mask));
      q.w[v + 4] = _mm512_or_si512(q.w[v + 4], _mm512_and_si512(shift(bits, at - 4 - v), mask));
    }
  }
  // A codebook type's nibbles looked up (+ 128) with vpshufb.
  template <TensorType T>
  static void codebook(Quants& q) {
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codebook_biased<T>())));
    for (auto& w : q.w) w = _mm512_shuffle_epi8(table, w);
  }

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    if constexpr (T == TensorType::Q8_0) {
      const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // w + 128 as an unsigned byte
      for (int v = 0; v < 8; ++v) q.w[v] = _mm512_xor_si512(load(block + kVector * v), flip);
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
      for (auto& w : q.w) w = _mm512_setzero_si512();
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
  static __m512i broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return _mm512_set1_epi32(four);
  }

  // Every type's codes are unsigned (see Quants); the bias comes off with the offset.
  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    return dot_codes<CodeSpan::Both, 255>(w, x, offset);
  }

  // Unsigned codes are the unsigned operand, activations the signed one;
  // any code of 8 bits fits.
  // Two chains of vpdpbusd where the span is whole, so that the tile's tokens
  // keep twice as many in flight (the sum is the same integer); a half span
  // is one chain, without adding a chain of zeros. The offset
  // starts a chain instead of being subtracted at the end: one instruction
  // fewer per token and block, on the vector ports vpdpbusd competes for.
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    __m512i low = _mm512_set1_epi32(-offset), high = _mm512_setzero_si512();
    if constexpr (S == CodeSpan::High) high = low;
    for (int v = 0; v < 4; ++v) {
      if constexpr (S != CodeSpan::High) low = _mm512_dpbusd_epi32(low, w.w[v], broadcast4(x, 4 * v));
      if constexpr (S != CodeSpan::Low) high = _mm512_dpbusd_epi32(high, w.w[v + 4], broadcast4(x, 16 + 4 * v));
    }
    if constexpr (S == CodeSpan::Low) return low;
    if constexpr (S == CodeSpan::High) return high;
    return _mm512_add_epi32(low, high);
  }

  // The products of NVecs tokens with span S of w, token t's x at x + t *
  // token_bytes, each chain started from the token's start (start[t *
  // start_stride], or zero without starts). Each weight vector meets every
  // token before the next one does, so the tokens' chains are all in flight
  // together: one chain per token suffices, where a token alone needs two
  // (dot_codes) and then an add on the ports vpdpbusd competes for.
  template <CodeSpan S, int NVecs>
  static void dot_tokens(const Quants& w, const int8_t* x, int64_t token_bytes, const int32_t* start,
                         int64_t start_stride, Rows (&out)[NVecs]) {
    if constexpr (NVecs == 1) {
      out[0] = dot_codes<S, 255>(w, x, start ? -start[0] : 0);
      return;
    }
    for (int t = 0; t < NVecs; ++t)
      out[t] = start ? _mm512_set1_epi32(start[t * start_stride]) : _mm512_setzero_si512();
    for (int v = span_begin(S) / 4; v < span_end(S) / 4; ++v) {
      // Code vector v holds each row's elements 4v .. 4v + 3 (see Quants).
#pragma GCC unroll 16
      for (int t = 0; t < NVecs; ++t)
        out[t] = _mm512_dpbusd_epi32(out[t], w.w[v], broadcast4(x + t * token_bytes, 4 * v));
    }
  }

  static Acc zero() { return _mm512_setzero_ps(); }

  static Acc weight_scales(const uint16_t* d) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
  }
  // 2^(e - 127) from each row's E8M0 byte (e8m0_bits in quant_mxfp4.hpp).
  static Acc e8m0_scales(const uint8_t* e) {
    const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e)));
    const __m512i bits = _mm512_slli_epi32(bytes, 23);
    return _mm512_castsi512_ps(_mm512_max_epu32(bits, _mm512_set1_epi32(0x00400000)));
  }
  static Acc scales(Acc w, float x_scale) { return _mm512_mul_ps(w, _mm512_set1_ps(x_scale)); }

  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    return _mm512_cvtepi32_ps(Signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes));
  }
  template <bool High>
  static Acc nibble_scales(const uint8_t* s) {
    const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    return _mm512_cvtepi32_ps(High ? _mm512_srli_epi32(bytes, 4) : _mm512_and_si512(bytes, _mm512_set1_epi32(0x0f)));
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
