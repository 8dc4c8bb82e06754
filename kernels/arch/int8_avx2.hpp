// The integer block product (kernels/int8_dot.hpp) with AVX2: 8 interleaved
// rows, one per 32-bit lane of a 256-bit register; byte products with
// vpmaddubsw (unsigned x signed, pairs summed in 16 bits), widened with
// vpmaddwd.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels::arch {

struct Avx2Int8Ops {
  static constexpr int kRows = 8;

  // Q8_0: the 8 vectors of a block, each with its own sign applied (|w|, as
  // the byte multiply wants an unsigned operand), and the signs. Q4_0: the
  // low and the high nibbles of its 4 vectors.
  struct Quants {
    __m256i a[8];
    __m256i b[8];
  };
  using Rows = __m256i;
  using Acc = __m256;

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    if constexpr (T == TensorType::Q4_0) {
      const __m256i low4 = _mm256_set1_epi8(0x0f);
      for (int v = 0; v < 4; ++v) {
        const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * v));
        q.a[v] = _mm256_and_si256(packed, low4);
        q.a[v + 4] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
      }
    } else {
      for (int v = 0; v < 8; ++v) {
        q.b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * v));
        q.a[v] = _mm256_sign_epi8(q.b[v], q.b[v]);
      }
    }
    return q;
  }

  // A K-quant unit (kernels/interleave_k.hpp): Q4_0's nibbles, with the
  // high bits shifted above them (a negative shift is to the right).
  static __m256i shift(__m256i v, int left) {
    return left >= 0 ? _mm256_sll_epi32(v, _mm_cvtsi32_si128(left)) : _mm256_srl_epi32(v, _mm_cvtsi32_si128(-left));
  }
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q = decode<TensorType::Q4_0>(unit);
    if constexpr (T == TensorType::Q5_K) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 4 * 32));
      const __m256i bit4 = _mm256_set1_epi8(0x10);
      for (int v = 0; v < 4; ++v) {
        q.a[v] = _mm256_or_si256(q.a[v], _mm256_and_si256(shift(bits, 4 - v), bit4));
        q.a[v + 4] = _mm256_or_si256(q.a[v + 4], _mm256_and_si256(shift(bits, -v), bit4));
      }
    } else if constexpr (T == TensorType::Q6_K) {
      const __m256i bits45 = _mm256_set1_epi8(0x30);
      for (int h = 0; h < 2; ++h) {
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + (4 + h) * 32));
        for (int v = 0; v < 4; ++v)
          q.a[4 * h + v] = _mm256_or_si256(q.a[4 * h + v], _mm256_and_si256(shift(bits, 4 - 2 * v), bits45));
      }
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
    if constexpr (T == TensorType::Q4_0) {
      return dot_codes<CodeSpan::Both, 15>(w, x, offset);
    } else {
      // |w| times x with w's sign; a pair is at most 2 * 127 * 127 < 32768
      // (activations never hold -128), so each vector is widened on its own.
      const __m256i ones = _mm256_set1_epi16(1);
      __m256i sum = _mm256_setzero_si256();
      for (int v = 0; v < 8; ++v) {
        const __m256i signed_x = _mm256_sign_epi8(broadcast4(x, 4 * v), w.b[v]);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(w.a[v], signed_x), ones));
      }
      return sum;
    }
  }

  // Unsigned codes (Q4_0, K-quants) times x: a pair of products is at most
  // 2 * MaxCode * 127 in a 16-bit lane, so that many vectors' pairs are
  // summed in 16 bits (8 for nibbles, 2 for Q6_K's 6-bit codes) before each
  // widening multiply-add.
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    constexpr int kInSixteenBits = 32767 / (2 * MaxCode * 127);
    static_assert(kInSixteenBits >= 1);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i sum = _mm256_setzero_si256();
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
    return _mm256_sub_epi32(sum, _mm256_set1_epi32(offset));
  }

  static Acc zero() { return _mm256_setzero_ps(); }

  static Acc weight_scales(const uint16_t* d) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
  }
  static Acc scales(Acc w, float x_scale) { return _mm256_mul_ps(w, _mm256_set1_ps(x_scale)); }

  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s));
    return _mm256_cvtepi32_ps(Signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes));
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
      std::memcpy(y, lanes, sizeof(float) * n_rows);
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
