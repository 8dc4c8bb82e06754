// BF16 weights: the activations that multiply them are rounded to bfloat16
// first, on every instruction set, as llama.cpp rounds them (its vector type
// for BF16 weights is BF16). On CPUs with AVX-512 BF16 they are multiplied
// by vdpbf16ps, which adds the products of two bfloat16 pairs to each float
// lane: twice the multiply-adds of an FMA on widened weights, and no
// widening. Except where the CPU also has AVX-512 FP16 (Intel's Sapphire
// Rapids and later): on one such Xeon vdpbf16ps issued at a quarter of the
// FMAs' rate, so half their flops, and widening was faster
// (docs/benchmarks.md). Elsewhere
// the rounded activations are floats again and meet the widened weights in
// FMAs (weight_row_bf16.hpp); a product of two bfloat16 values is exact in
// float either way.
//
// Numerics: each (row, token) result is one accumulator per lane fed in
// order of k, then a fixed horizontal sum, whatever the tile: a token's
// result is the same alone or in a batch, on any number of threads.
#pragma once

#include <cstdint>

#include "kernels/bf16.hpp"
#include "kernels/tensor_type.hpp"

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && !defined(__AVX512FP16__)
#include <immintrin.h>

#include <cstring>
#define KILN_BF16_PAIRS 1
#endif

namespace kiln::kernels {

// Whether the matmul of weight type t reads activations rounded to bfloat16.
constexpr bool reads_bf16(TensorType t) { return t == TensorType::BF16; }

#ifdef KILN_BF16_PAIRS
inline constexpr bool kBf16Pairs = true;
#else
inline constexpr bool kBf16Pairs = false;  // rounded activations stay floats
#endif

// out[i] = x[i] rounded to bfloat16, as a float.
inline void round_through_bf16(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
}

#ifdef KILN_BF16_PAIRS

// out[i] = fp32_to_bf16(x[i]), the same bits (ties to even, NaN made quiet,
// subnormals kept: vcvtneps2bf16 flushes them, so this is integer arithmetic).
inline void round_to_bf16(const float* x, uint16_t* out, int64_t n) {
  int64_t i = 0;
  const __m512i low_bit = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7fff);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x0040);
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    const __m512i high = _mm512_srli_epi32(bits, 16);
    const __m512i rounded =
        _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(half, _mm512_and_si512(high, low_bit))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, abs_mask), inf);
    const __m512i result = _mm512_mask_or_epi32(rounded, nan, high, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(result));
  }
  for (; i < n; ++i) out[i] = fp32_to_bf16(x[i]);
}

namespace detail {

inline __m512bh as_bf16_pairs(__m512i v) {
  __m512bh pairs;
  std::memcpy(&pairs, &v, sizeof pairs);
  return pairs;
}

}  // namespace detail

// out[r][t] = dot(weight row r, vector t) for NRows BF16 weight rows of Cols
// values (from w, RowBytes apart: consecutive by default) and NVecs rounded
// activation vectors (consecutive, Cols apart, from x). A row's last partial
// step is loaded with zeros past its end.
template <int Cols, int NRows, int NVecs, int64_t RowBytes = int64_t{Cols} * 2>
void dot_tile_bf16(const uint8_t* w, const uint16_t* x, float (&out)[NRows][NVecs]) {
  constexpr int kStep = 32;  // bfloat16 values in a 512-bit register
  constexpr int64_t kRowBytes = RowBytes;
  __m512 acc[NRows][NVecs];
  for (auto& row_acc : acc)
    for (auto& a : row_acc) a = _mm512_setzero_ps();
  const auto step = [&](int k, __mmask32 valid) {
    __m512bh wk[NRows];
    for (int r = 0; r < NRows; ++r)
      wk[r] = detail::as_bf16_pairs(_mm512_maskz_loadu_epi16(valid, w + r * kRowBytes + k * sizeof(uint16_t)));
    for (int t = 0; t < NVecs; ++t) {
      const __m512bh xk = detail::as_bf16_pairs(_mm512_maskz_loadu_epi16(valid, x + t * Cols + k));
      for (int r = 0; r < NRows; ++r) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wk[r], xk);
    }
  };
  constexpr int kWhole = Cols / kStep * kStep;
  for (int k = 0; k < kWhole; k += kStep) step(k, ~__mmask32{0});
  if constexpr (kWhole < Cols) step(kWhole, static_cast<__mmask32>((1u << (Cols - kWhole)) - 1));
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NVecs; ++t) out[r][t] = _mm512_reduce_add_ps(acc[r][t]);
}

// Panels of bfloat16 pairs for a prompt's products (matmul_float.hpp): a
// vector is 32 bfloat16 values, a row's last partial one padded with zeros
// as dot_tile_bf16's masked load pads it, and a tile ends as dot_tile_bf16
// ends, so the sums are its bits.
struct Bf16PairPanels {
  using Elem = uint16_t;
  using Vec = __m512i;
  using Acc = __m512;
  static constexpr int kElems = 32;
  template <int Cols>
  static constexpr int kVectors = (Cols + kElems - 1) / kElems;

  static Vec load(const uint16_t* p) { return _mm512_load_si512(p); }
  static void keep(Vec& v) { asm("" : "+v"(v)); }
  static Acc zero() { return _mm512_setzero_ps(); }
  static Acc load_acc(const float* p) { return _mm512_load_ps(p); }
  static void store_acc(Acc a, float* p) { _mm512_store_ps(p, a); }
  static Acc madd(Acc acc, Vec w, Vec x) {
    return _mm512_dpbf16_ps(acc, detail::as_bf16_pairs(w), detail::as_bf16_pairs(x));
  }

  // Vector v of a row of Cols values, zeros past its end.
  template <int Cols>
  static Vec row_vector(const uint16_t* row, int v) {
    constexpr int kLast = Cols - (kVectors<Cols> - 1) * kElems;
    const auto valid = v + 1 < kVectors<Cols> ? ~__mmask32{0} : static_cast<__mmask32>(~0ull >> (64 - kLast));
    return _mm512_maskz_loadu_epi16(valid, row + v * kElems);
  }
  template <TensorType T, int Cols>
  static void fill(const uint8_t* row, int v, uint16_t* out) {
    _mm512_store_si512(out, row_vector<Cols>(reinterpret_cast<const uint16_t*>(row), v));
  }
  template <int Cols>
  static void pack(const uint16_t* x, int v, uint16_t* out) {
    _mm512_store_si512(out, row_vector<Cols>(x, v));
  }
  template <TensorType T, int Cols, int NRows, int NTokens, int64_t RowBytes>
  static void finish(Acc (&acc)[NRows][NTokens], const uint8_t*, const uint16_t*, float (&sums)[NRows][NTokens]) {
    for (int r = 0; r < NRows; ++r)
      for (int t = 0; t < NTokens; ++t) sums[r][t] = _mm512_reduce_add_ps(acc[r][t]);
  }
};

#endif  // KILN_BF16_PAIRS

}  // namespace kiln::kernels
