// Dot products of weight rows with activation vectors: the inner loop of
// matmul (and attention's q.k).
//
// Numerics: every dot product is computed the same way no matter how many
// rows and vectors are processed together: one SIMD accumulator fed by FMAs
// in order of k, a fixed horizontal sum, then the leftover elements added with
// scalar FMAs. Tiling only decides which products share a weight load.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/weight_row.hpp"

namespace kiln::kernels {

// out[r][t] = dot(weight row r, vector t) for a tile of NRows weight rows
// (starting at w, RowBytes apart: consecutive by default) and NVecs
// consecutive float vectors (starting at x, Cols floats apart).
template <TensorType T, int Cols, int NRows, int NVecs, int64_t RowBytes = static_cast<int64_t>(row_bytes(T, Cols))>
void dot_tile(const uint8_t* w, const float* x, float (&out)[NRows][NVecs]) {
  constexpr int64_t kRowBytes = RowBytes;
  constexpr int kLanes = static_cast<int>(FloatVec::size);
  constexpr int kSimdCols = Cols / kLanes * kLanes;
  static_assert(kSimdCols == Cols || traits_of(T).block_elems == 1, "only float rows have a scalar tail");

  FloatVec acc[NRows][NVecs];
  for (auto& row_acc : acc)
    for (auto& a : row_acc) a = FloatVec(0.0f);

  // Whole quantized blocks per outer step: the compiler then sees where in
  // its block each vector lies, and decodes a block's scale only once.
  constexpr int kStep = std::max(kLanes, traits_of(T).block_elems);
  for (int k0 = 0; k0 < kSimdCols; k0 += kStep) {
    for (int k = k0; k < k0 + kStep; k += kLanes) {
      FloatVec wk[NRows];
      for (int r = 0; r < NRows; ++r) wk[r] = WeightRow<T>::load(w + r * kRowBytes, k);
      for (int t = 0; t < NVecs; ++t) {
        const FloatVec xk = FloatVec::load_unaligned(x + t * Cols + k);
        for (int r = 0; r < NRows; ++r) acc[r][t] = xsimd::fma(wk[r], xk, acc[r][t]);
      }
    }
  }

  for (int r = 0; r < NRows; ++r) {
    for (int t = 0; t < NVecs; ++t) {
      float sum = xsimd::hadd(acc[r][t]);
      for (int k = kSimdCols; k < Cols; ++k)
        sum = std::fma(WeightRow<T>::at(w + r * kRowBytes, k), x[t * Cols + k], sum);
      out[r][t] = sum;
    }
  }
}

}  // namespace kiln::kernels
