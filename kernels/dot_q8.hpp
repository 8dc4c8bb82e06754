// Dot products of Q8_0 / Q4_0 weight rows with activations rounded to Q8
// blocks (q8_activations.hpp): the inner loop of the quantized matmul, in
// integer arithmetic (int8_dot.hpp).
//
// Numerics: per block, the integer lanes of weight . activation are scaled by
// d_weight * d_activation (one float product) and accumulated as int8_dot.hpp
// describes, block after block. Tiling only decides which products share a
// weight load, so a token's result is the same alone or in a batch.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/int8_dot.hpp"
#include "kernels/q8_activations.hpp"

namespace kiln::kernels {

// Weight types whose matmul reads Q8-rounded activations.
constexpr bool reads_q8(TensorType t) { return t == TensorType::Q8_0 || t == TensorType::Q4_0; }

template <TensorType T>
using QuantBlock = std::conditional_t<T == TensorType::Q8_0, BlockQ8_0, BlockQ4_0>;

// out[r][t] = dot(weight row r, activation vector t) for a tile of NRows
// consecutive weight rows (starting at w) and NVecs consecutive Q8 vectors.
template <class Ops, TensorType T, int Cols, int NRows, int NVecs>
void dot_tile_q8(const uint8_t* w, Q8In x, float (&out)[NRows][NVecs]) {
  static_assert(reads_q8(T) && Cols % kQuantBlockElems == 0);
  constexpr int kBlocks = Cols / kQuantBlockElems;
  const auto* rows = reinterpret_cast<const QuantBlock<T>*>(w);

  typename Ops::Acc acc[NRows][NVecs];
  for (auto& row_acc : acc)
    for (auto& a : row_acc) a = Ops::zero();

  for (int b = 0; b < kBlocks; ++b) {
    typename Ops::Qs wq[NRows];
    typename Ops::Scale wd[NRows];
    for (int r = 0; r < NRows; ++r) {
      const QuantBlock<T>& block = rows[r * kBlocks + b];
      if constexpr (T == TensorType::Q4_0)
        wq[r] = Ops::nibbles(block);
      else
        wq[r] = Ops::weights(block);
      wd[r] = Ops::scale(block.d);
    }
    for (int t = 0; t < NVecs; ++t) {
      const typename Ops::Qs xq = Ops::load(x.qs + t * Cols + b * kQuantBlockElems);
      const typename Ops::Scale xd = Ops::scale(x.d[t * kBlocks + b]);
      if constexpr (T == TensorType::Q4_0) {
        const typename Ops::Lanes x_offset8 = Ops::offset8(xq);
        for (int r = 0; r < NRows; ++r)
          acc[r][t] = Ops::fma_dot_q4(wq[r], xq, x_offset8, Ops::mul(wd[r], xd), acc[r][t]);
      } else {
        for (int r = 0; r < NRows; ++r) acc[r][t] = Ops::fma_dot(wq[r], xq, Ops::mul(wd[r], xd), acc[r][t]);
      }
    }
  }

  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NVecs; ++t) out[r][t] = Ops::total(acc[r][t]);
}

}  // namespace kiln::kernels
