// The integer core of the quantized matmul: one block (32 values) of 8
// interleaved weight rows (interleave.hpp) times one block of activations
// rounded to Q8 (q8_activations.hpp), one result per row.
//
// Numerics: a row's block product is an exact integer (at most
// 32 * 127 * 127 in magnitude, so exact in float too). It is scaled by
// d_weight * d_activation (one float product) and accumulated in float,
// acc = fma(float(dot), scale, acc), block after block in order. Integer sums
// are exact whatever their grouping, so every implementation computes the
// same bits: the portable and the AVX2 code below are checked against each
// other on x86, where both are compiled.
//
// Q4_0 weights (nibble - 8) are multiplied as the unsigned nibbles, and
// 8 * (the activation block's sum) is subtracted: the same integer.
//
// An implementation is a struct of static functions over its own types:
// Quants (one block of the 8 rows, decoded once and reused for every token),
// Rows (8 int32, one per row) and Acc (8 floats, one per row).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/fp16.hpp"
#include "kernels/interleave.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace kiln::kernels {

// Plain C++: runs anywhere.
struct PortableInt8Ops {
  struct Quants {  // the 8 rows' 32 values, as stored (signed) or as nibbles (Q4_0)
    int32_t v[kInterleaveRows][kQuantBlockElems];
  };
  struct Rows {
    int32_t v[kInterleaveRows];
  };
  struct Acc {
    float v[kInterleaveRows];
  };

  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    for (int r = 0; r < kInterleaveRows; ++r)
      for (int j = 0; j < static_cast<int>(block_quant_bytes(T)); ++j) {
        const uint8_t byte = block[(j / 4) * 32 + r * 4 + j % 4];
        if constexpr (T == TensorType::Q4_0) {
          q.v[r][j] = byte & 0x0f;
          q.v[r][j + 16] = byte >> 4;
        } else {
          q.v[r][j] = static_cast<int8_t>(byte);
        }
      }
    return q;
  }

  // The exact integer block products; `offset` is subtracted from each (the
  // Q4_0 nibbles' 8 * sum(x), 0 for Q8_0).
  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    Rows out;
    for (int r = 0; r < kInterleaveRows; ++r) {
      int32_t sum = 0;
      for (int j = 0; j < kQuantBlockElems; ++j) sum += w.v[r][j] * int32_t{x[j]};
      out.v[r] = sum - offset;
    }
    return out;
  }

  static Acc zero() { return {}; }

  // The 8 rows' fp16 scales, as floats.
  static Acc weight_scales(const uint16_t* d) {
    Acc s;
    for (int r = 0; r < kInterleaveRows; ++r) s.v[r] = fp16_to_fp32(d[r]);
    return s;
  }
  // Those times the activation block's scale.
  static Acc scales(const Acc& w, float x_scale) {
    Acc s;
    for (int r = 0; r < kInterleaveRows; ++r) s.v[r] = w.v[r] * x_scale;
    return s;
  }

  static Acc fma(const Rows& dots, const Acc& scale, Acc acc) {
    for (int r = 0; r < kInterleaveRows; ++r) acc.v[r] = std::fma(static_cast<float>(dots.v[r]), scale.v[r], acc.v[r]);
    return acc;
  }

  static void store(const Acc& a, float* y, int n_rows) { std::memcpy(y, a.v, sizeof(float) * n_rows); }
  static void add(const Acc& a, float* y, int n_rows) {
    for (int r = 0; r < n_rows; ++r) y[r] += a.v[r];
  }
};

#if defined(__AVX2__) && defined(__FMA__)
struct Avx2Int8Ops {
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

  // Activation bytes x[at .. at + 3] in every 32-bit lane.
  static __m256i broadcast4(const int8_t* x, int at) {
    int32_t four;
    std::memcpy(&four, x + at, sizeof(four));
    return _mm256_set1_epi32(four);
  }

  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    const __m256i ones = _mm256_set1_epi16(1);
    if constexpr (T == TensorType::Q4_0) {
      // Nibble (<= 15) times |x| (<= 127), pairs summed: at most 3810 per
      // 16-bit lane, so all 8 products of a lane fit in 16 bits before the
      // widening multiply-add.
      __m256i pairs = _mm256_setzero_si256();
      for (int v = 0; v < 4; ++v) {
        pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(w.a[v], broadcast4(x, 4 * v)));
        pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(w.a[v + 4], broadcast4(x, 16 + 4 * v)));
      }
      return _mm256_sub_epi32(_mm256_madd_epi16(pairs, ones), _mm256_set1_epi32(offset));
    } else {
      // |w| times x with w's sign; a pair is at most 2 * 127 * 127 < 32768
      // (activations never hold -128), so each vector is widened on its own.
      __m256i sum = _mm256_setzero_si256();
      for (int v = 0; v < 8; ++v) {
        const __m256i signed_x = _mm256_sign_epi8(broadcast4(x, 4 * v), w.b[v]);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(w.a[v], signed_x), ones));
      }
      return sum;
    }
  }

  static Acc zero() { return _mm256_setzero_ps(); }

  static Acc weight_scales(const uint16_t* d) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
  }
  static Acc scales(Acc w, float x_scale) { return _mm256_mul_ps(w, _mm256_set1_ps(x_scale)); }

  static Acc fma(Rows dots, Acc scale, Acc acc) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots), scale, acc); }

  static void store(Acc a, float* y, int n_rows) {
    if (n_rows == kInterleaveRows) {
      _mm256_storeu_ps(y, a);
    } else {
      alignas(32) float lanes[kInterleaveRows];
      _mm256_store_ps(lanes, a);
      std::memcpy(y, lanes, sizeof(float) * n_rows);
    }
  }
  static void add(Acc a, float* y, int n_rows) {
    if (n_rows == kInterleaveRows) {
      _mm256_storeu_ps(y, _mm256_add_ps(_mm256_loadu_ps(y), a));
    } else {
      alignas(32) float lanes[kInterleaveRows];
      _mm256_store_ps(lanes, a);
      for (int r = 0; r < n_rows; ++r) y[r] += lanes[r];
    }
  }
};
using NativeInt8Ops = Avx2Int8Ops;
#else
using NativeInt8Ops = PortableInt8Ops;
#endif

}  // namespace kiln::kernels
