// The quantized matmul's inner loop: a group of kInterleaveRows interleaved
// weight rows of a 32-element block type (Q8_0, Q4_0, Q5_0, Q5_1, IQ4_NL, MXFP4;
// interleave.hpp) times activation vectors rounded to Q8 blocks
// (q8_activations.hpp), in integer arithmetic (int8_dot.hpp); groups of the
// super-block types go to dot_kquant.hpp.
//
// Numerics: each (row, token) result is accumulated as int8_dot.hpp
// describes, block after block; Q5_1 (value = d * code + m) then adds its
// min, acc = fma(m, dx * float(S), acc) with S the activation block's sum
// (as fnma(m, -(dx * float(S)), acc), the same single rounding). Tiling
// only decides how many tokens share a decoded weight block, so a token's
// result is the same alone or in a batch.
#pragma once

#include <cstdint>

#include "kernels/block_products.hpp"
#include "kernels/cache_line.hpp"
#include "kernels/dot_kquant.hpp"
#include "kernels/int8_dot.hpp"
#include "kernels/interleave.hpp"
#include "kernels/q8_activations.hpp"

namespace kiln::kernels {

// Weight types whose matmul reads Q8-rounded activations.
constexpr bool reads_q8(TensorType t) { return is_interleaved(t); }

// dot_group_q8 for the 32-element block types, over NGroups consecutive
// groups at once: acc[g * NVecs + t] for group g and token t. Each group's
// lanes see the same operations in the same order whatever NGroups is.
template <class Ops, TensorType T, int Cols, int NGroups, int NVecs>
void dot_groups_blocks(const uint8_t* first_group, Q8In x, const int32_t* starts,
                       typename Ops::Acc (&acc)[NGroups * NVecs]) {
  static_assert(is_block_interleaved(T) && Cols % kQuantBlockElems == 0 && Ops::kRows == kInterleaveRows);
  constexpr int kBlocks = Cols / kQuantBlockElems;
  constexpr int64_t kBlockBytes = Ops::kRows * block_quant_bytes(T);
  constexpr int64_t kGroupBytes = interleaved_group_bytes(T, Cols);
  constexpr int64_t kAhead = next_groups_ahead(NGroups, kGroupBytes);
  // MXFP4's scale 2^(e - 128) is taken as 2^(e - 127) (e8m0_scales) and its
  // half put on the activation scale: products of powers of two, so the
  // same bits as ggml's 2^(e - 128) * d_x.
  constexpr float kActivationScale = T == TensorType::MXFP4 ? 0.5f : 1.0f;

  // Accumulated in locals: stores to `acc` could alias the int8 activations,
  // so the compiler would write every token's sum back after every block.
  typename Ops::Acc sums[NGroups * NVecs];
  for (auto& a : sums) a = Ops::zero();
  for (int b = 0; b < kBlocks; ++b) {
    const TokenBlocks tokens{x.qs + b * kQuantBlockElems, Cols, starts_from<T>(starts, b), kBlocks};
    for (int g = 0; g < NGroups; ++g) {
      const uint8_t* group = first_group + g * kGroupBytes;
      const uint8_t* quants = group + block_quants_offset(T, b);
      const uint8_t* block_scales = group + block_scales_offset(T, b);
      // The scales' line is asked for at every block, so more than once when
      // it covers several: a fixed count keeps the loop's code short.
      prefetch_lines_to_l2(quants + kAhead, kBlockBytes);
      prefetch_to_l2(block_scales + kAhead);
      const typename Ops::Quants w = Ops::template decode<T>(quants);
      const auto* halves = reinterpret_cast<const uint16_t*>(block_scales);
      typename Ops::Acc w_scales;
      if constexpr (T == TensorType::MXFP4)
        w_scales = Ops::e8m0_scales(block_scales);
      else
        w_scales = Ops::weight_scales(halves);
      const typename Ops::Acc mins = T == TensorType::Q5_1 ? Ops::weight_scales(halves + Ops::kRows) : Ops::zero();
      typename Ops::Rows dots[NVecs];
      block_products<Ops, T, NVecs>(w, tokens, dots);
#pragma GCC unroll 16
      for (int t = 0; t < NVecs; ++t) {
        const Q8In xb = x.at_block(static_cast<int64_t>(t) * kBlocks + b);
        typename Ops::Acc& sum = sums[g * NVecs + t];
        sum = Ops::fma(dots[t], Ops::scales(w_scales, kActivationScale * *xb.d), sum);
        if constexpr (T == TensorType::Q5_1) sum = Ops::fnma(mins, -xb.scaled(2), sum);
      }
    }
  }
  for (int i = 0; i < NGroups * NVecs; ++i) acc[i] = sums[i];
}

// acc[g * NVecs + t] (lane r) = dot(row r of group g, activation vector t)
// for NGroups consecutive groups and NVecs consecutive Q8 vectors of Cols
// values, any quantized type; starts are chain_starts<T> of those vectors
// (kernels/block_products.hpp).
template <class Ops, TensorType T, int Cols, int NGroups, int NVecs>
void dot_groups_q8(const uint8_t* first_group, Q8In x, const int32_t* starts,
                   typename Ops::Acc (&acc)[NGroups * NVecs]) {
  if constexpr (is_super_block_type(T))
    dot_groups_kquant<Ops, T, Cols, NGroups, NVecs>(first_group, x, starts, acc);
  else
    dot_groups_blocks<Ops, T, Cols, NGroups, NVecs>(first_group, x, starts, acc);
}

// acc[t] (lane r) = dot(row r of the group, activation vector t) for NVecs
// consecutive Q8 vectors of Cols values.
template <class Ops, TensorType T, int Cols, int NVecs>
void dot_group_q8(const uint8_t* group, Q8In x, const int32_t* starts, typename Ops::Acc (&acc)[NVecs]) {
  dot_groups_q8<Ops, T, Cols, 1, NVecs>(group, x, starts, acc);
}

}  // namespace kiln::kernels
