// Dot products of weight rows with activation vectors: the inner loop of
// matmul (and attention's q.k).
//
// Numerics: every dot product is computed the same way no matter how many
// rows and vectors are processed together: one SIMD accumulator fed by FMAs
// in order of k, the columns after the last whole vector (rows at least a
// vector long) as one more vector that ends at the last column, with the
// activations of the columns already counted set to zero, then the lanes
// added by sum_each's tree (one tree for kFloatLanes accumulators at once; each
// accumulator's sum is the same whatever the others). Rows shorter than a
// vector add their leftover elements with scalar FMAs. Tiling only decides
// which products share a weight load.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cache_line.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels {

// Ends a tile of dot products whose accumulators hold the products of the
// rows' whole vectors (acc[r][t]: row r, vector t): the columns after them as
// one more vector ending at the last column, the activations of the columns
// already counted set to zero (rows at least a vector long); each
// accumulator's lanes added by sum_each's tree, kFloatLanes accumulators per
// tree; then the columns of rows shorter than a vector with scalar FMAs.
// Rows start at w, RowBytes apart; vector t at x + t * Cols.
template <TensorType T, int Cols, int NRows, int NVecs, int64_t RowBytes>
void finish_dot_tile(FloatVec (&acc)[NRows][NVecs], const uint8_t* w, const float* x, float (&out)[NRows][NVecs]) {
  constexpr int kLanes = static_cast<int>(FloatVec::size);
  constexpr int kSimdCols = Cols / kLanes * kLanes;
  constexpr int kTail = Cols - kSimdCols;
  constexpr bool kVectorTail = kTail > 0 && Cols >= kLanes;
  static_assert(kTail == 0 || traits_of(T).block_elems == 1, "only float rows have a tail");
  if constexpr (kVectorTail) {
    alignas(FloatVec::arch_type::alignment()) float lane_index[kLanes];
    for (int p = 0; p < kLanes; ++p) lane_index[p] = static_cast<float>(p);
    const auto tail_lanes = FloatVec::load_aligned(lane_index) >= FloatVec(static_cast<float>(kLanes - kTail));
    FloatVec wk[NRows];
    for (int r = 0; r < NRows; ++r) wk[r] = WeightRow<T>::load(w + r * RowBytes, Cols - kLanes);
    for (int t = 0; t < NVecs; ++t) {
      const FloatVec xk = xsimd::select(tail_lanes, FloatVec::load_unaligned(x + t * Cols + Cols - kLanes), FloatVec(0.0f));
      for (int r = 0; r < NRows; ++r) acc[r][t] = xsimd::fma(wk[r], xk, acc[r][t]);
    }
  }

  constexpr int kAccs = NRows * NVecs;
  constexpr int kGroups = (kAccs + kLanes - 1) / kLanes;
  alignas(FloatVec::arch_type::alignment()) float sums[kGroups * kLanes];
  for (int g = 0; g < kGroups; ++g) {
    FloatVec group[kLanes];
    for (int i = 0; i < kLanes; ++i) {
      const int a = g * kLanes + i;
      group[i] = a < kAccs ? acc[a / NVecs][a % NVecs] : FloatVec(0.0f);
    }
    sum_each(group).store_aligned(sums + g * kLanes);
  }
  for (int r = 0; r < NRows; ++r) {
    for (int t = 0; t < NVecs; ++t) {
      float sum = sums[r * NVecs + t];
      if constexpr (!kVectorTail)
        for (int k = kSimdCols; k < Cols; ++k) sum = std::fma(WeightRow<T>::at(w + r * RowBytes, k), x[t * Cols + k], sum);
      out[r][t] = sum;
    }
  }
}

// out[r][t] = dot(weight row r, vector t) for a tile of NRows weight rows
// (starting at w, RowBytes apart: consecutive by default) and NVecs
// consecutive float vectors (starting at x, Cols floats apart).
template <TensorType T, int Cols, int NRows, int NVecs, int64_t RowBytes = static_cast<int64_t>(row_bytes(T, Cols))>
void dot_tile(const uint8_t* w, const float* x, float (&out)[NRows][NVecs]) {
  constexpr int kLanes = static_cast<int>(FloatVec::size);
  constexpr int kSimdCols = Cols / kLanes * kLanes;

  FloatVec acc[NRows][NVecs];
  for (auto& row_acc : acc)
    for (auto& a : row_acc) a = FloatVec(0.0f);

  // Whole quantized blocks per outer step: the compiler then sees where in
  // its block each vector lies, and decodes a block's scale only once.
  constexpr int kStep = std::max(kLanes, traits_of(T).block_elems);
  // One vector (generation) reads the rows from memory, NRows streams at
  // once. For rows of 16-bit values, asking for the next tile's rows at the
  // same place as these keeps those streams a tile ahead, where the hardware
  // prefetcher alone left one thread's reads well short of the bandwidth;
  // float rows read as fast without it and slower from cache with it
  // (docs/benchmarks.md, "the next tile's rows asked for ahead"). Once per
  // cache line of a row.
  constexpr int64_t kStepBytes = static_cast<int64_t>(row_bytes(T, kStep));
  constexpr bool kNextTilePrefetch =
      kStepBytes < static_cast<int64_t>(sizeof(FloatVec)) && kCacheLineBytes % kStepBytes == 0;
  for (int k0 = 0; k0 < kSimdCols; k0 += kStep) {
    if constexpr (NVecs == 1 && kNextTilePrefetch) {
      const int64_t at = k0 * kStepBytes / kStep;
      if (at % kCacheLineBytes == 0)
        for (int r = 0; r < NRows; ++r) prefetch_to_l2(w + (NRows + r) * RowBytes + at);
    }
    for (int k = k0; k < k0 + kStep; k += kLanes) {
      FloatVec wk[NRows];
      for (int r = 0; r < NRows; ++r) wk[r] = WeightRow<T>::load(w + r * RowBytes, k);
      for (int t = 0; t < NVecs; ++t) {
        const FloatVec xk = FloatVec::load_unaligned(x + t * Cols + k);
        for (int r = 0; r < NRows; ++r) acc[r][t] = xsimd::fma(wk[r], xk, acc[r][t]);
      }
    }
  }
  finish_dot_tile<T, Cols, NRows, NVecs, RowBytes>(acc, w, x, out);
}

}  // namespace kiln::kernels
