// The integer block product (kernels/int8_dot.hpp) with AVX2: 8 interleaved
// rows, one per 32-bit lane of a 256-bit register; byte products with
// vpmaddubsw (unsigned x signed, pairs summed in 16 bits), widened with
// vpmaddwd.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/codebook.hpp"

namespace kiln::kernels::arch {

struct Avx2Int8Ops {
  static constexpr int kRows = 8;
  static constexpr int kVector = 32;  // bytes of one interleaved vector
  // A prompt's tile of tokens (kernels/matmul.hpp), token by token; the
  // tokens left after whole tiles go one by one.
  static constexpr int kTokenTile = 6;
  static constexpr int kRestTile = kTokenTile;

  // The block's 8 code vectors (kernels/interleave_unit.hpp: vector v holds
  // elements 4v.., vector 4 + v elements 16 + 4v..). Signed weights (Q8_0,
  // the codebook types' values) as their magnitudes in a and themselves in b (the
  // byte multiply wants an unsigned operand); unsigned codes in a.
  struct Quants {
    __m256i a[8];
    __m256i b[8];
  };
  using Rows = __m256i;
  using Acc = __m256;

  static __m256i load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

  // v shifted left by `left` bits in each 32-bit lane (right when negative).
  static __m256i shift(__m256i v, int left) {
    return left >= 0 ? _mm256_sll_epi32(v, _mm_cvtsi32_si128(left)) : _mm256_srl_epi32(v, _mm_cvtsi32_si128(-left));
  }

  // The parts of interleave_unit.hpp: nibble vectors become the codes' low
  // 4 bits; crumb and bit vectors are ORed in at bit `at` of each code.
  static void nibbles(const uint8_t* at, Quants& q) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int v = 0; v < 4; ++v) {
      const __m256i packed = load(at + kVector * v);
      q.a[v] = _mm256_and_si256(packed, low4);
      q.a[v + 4] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
    }
  }
  static void or_crumbs(const uint8_t* crumbs, int at, Quants& q) {
    const __m256i mask = _mm256_set1_epi8(static_cast<char>(3 << at));
    for (int h = 0; h < 2; ++h) {
      const __m256i bits = load(crumbs + kVector * h);
      for (int v = 0; v < 4; ++v)
        q.a[4 * h + v] = _mm256_or_si256(q.a[4 * h + v], _mm256_and_si256(shift(bits, at - 2 * v), mask));
    }
  }
  static void or_bits(const uint8_t* bit_vector, int at, Quants& q) {
    const __m256i bits = load(bit_vector);
    const __m256i mask = _mm256_set1_epi8(static_cast<char>(1 << at));
    for (int v = 0; v < 4; ++v) {
      q.a[v] = _mm256_or_si256(q.a[v], _mm256_and_si256(shift(bits, at - v), mask));
      q.a[v + 4] = _mm256_or_si256(q.a[v + 4], _mm256_and_si256(shift(bits, at - 4 - v), mask));
    }
  }
  // A codebook type's nibbles looked up with vpshufb, as signed weights.
  template <TensorType T>
  static void codebook(Quants& q) {
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codebook_values<T>())));
    for (int v = 0; v < 8; ++v) {
      q.b[v] = _mm256_shuffle_epi8(table, q.a[v]);
      q.a[v] = _mm256_sign_epi8(q.b[v], q.b[v]);
    }
  }

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    if constexpr (T == TensorType::Q8_0) {
      for (int v = 0; v < 8; ++v) {
        q.b[v] = load(block + kVector * v);
        q.a[v] = _mm256_sign_epi8(q.b[v], q.b[v]);
      }
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
      for (auto& a : q.a) a = _mm256_setzero_si256();
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
  static __m256i broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return _mm256_set1_epi32(four);
  }

  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    if constexpr (has_signed_weights(T)) {
      // |w| times x with w's sign; a pair is at most 2 * 127 * 127 < 32768
      // (activations never hold -128), so each vector is widened on its own.
      // The weights are the values themselves: no offset.
      const __m256i ones = _mm256_set1_epi16(1);
      __m256i sum = _mm256_setzero_si256();
      for (int v = 0; v < 8; ++v) {
        const __m256i signed_x = _mm256_sign_epi8(broadcast4(x, 4 * v), w.b[v]);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(w.a[v], signed_x), ones));
        // Added here, in order: left free, GCC reorders the integer sums of a
        // tile's tokens after all 48 of their products, which wait on the
        // stack (docs/benchmarks.md, "Q8_0 products on AVX2").
        asm("" : "+x"(sum));
      }
      return sum;
    } else {
      return dot_codes<CodeSpan::Both, T == TensorType::Q4_0 ? 15 : 31>(w, x, offset);
    }
  }

  // Unsigned codes times x: a pair of products is at most 2 * MaxCode * 127
  // in a 16-bit lane, so that many vectors' pairs are summed in 16 bits
  // (8 for nibbles, 2 for Q6_K's 6-bit codes) before each widening
  // multiply-add.
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    constexpr int kInSixteenBits = 32767 / (2 * MaxCode * 127);
    static_assert(kInSixteenBits >= 1);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i sum = _mm256_set1_epi32(-offset);  // the offset comes off from the start
    __m256i pairs = _mm256_setzero_si256();
    int in_pairs = 0;
    const auto take = [&](const __m256i& codes, int at) {
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(codes, broadcast4(x, at)));
      if (++in_pairs == kInSixteenBits) {
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
        pairs = _mm256_setzero_si256();
        in_pairs = 0;
      }
    };
    for (int v = 0; v < 4; ++v) {
      if constexpr (S != CodeSpan::High) take(w.a[v], 4 * v);
      if constexpr (S != CodeSpan::Low) take(w.a[v + 4], 16 + 4 * v);
    }
    if (in_pairs > 0) sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
    return sum;
  }

  static Acc zero() { return _mm256_setzero_ps(); }

  static Acc weight_scales(const uint16_t* d) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
  }
  // 2^(e - 127) from each row's E8M0 byte (e8m0_bits in quant_mxfp4.hpp).
  static Acc e8m0_scales(const uint8_t* e) {
    const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e)));
    const __m256i bits = _mm256_slli_epi32(bytes, 23);
    return _mm256_castsi256_ps(_mm256_max_epu32(bits, _mm256_set1_epi32(0x00400000)));
  }
  static Acc scales(Acc w, float x_scale) { return _mm256_mul_ps(w, _mm256_set1_ps(x_scale)); }

  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s));
    return _mm256_cvtepi32_ps(Signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes));
  }
  template <bool High>
  static Acc nibble_scales(const uint8_t* s) {
    const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)));
    return _mm256_cvtepi32_ps(High ? _mm256_srli_epi32(bytes, 4) : _mm256_and_si256(bytes, _mm256_set1_epi32(0x0f)));
  }
  static Acc mul(Acc a, Acc b) { return _mm256_mul_ps(a, b); }
  static Acc fnma(Acc m, float x, Acc acc) { return _mm256_fnmadd_ps(m, _mm256_set1_ps(x), acc); }

  static Acc fma(Rows dots, Acc scale, Acc acc) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots), scale, acc); }

  static void store(Acc a, float* y, int n_rows) {
    if (n_rows == kRows) {
      _mm256_storeu_ps(y, a);
    } else {
      alignas(32) float lanes[kRows];
      _mm256_store_ps(lanes, a);
      for (int r = 0; r < n_rows; ++r) y[r] = lanes[r];
    }
  }
  static void add(Acc a, float* y, int n_rows) {
    if (n_rows == kRows) {
      _mm256_storeu_ps(y, _mm256_add_ps(_mm256_loadu_ps(y), a));
    } else {
      alignas(32) float lanes[kRows];
      _mm256_store_ps(lanes, a);
      for (int r = 0; r < n_rows; ++r) y[r] += lanes[r];
    }
  }
};

}  // namespace kiln::kernels::arch
