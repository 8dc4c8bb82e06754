// The super-block matmul's inner loop: a group of interleaved Q2_K .. Q6_K
// or IQ4_XS rows (interleave_k.hpp) times activation vectors rounded to Q8
// blocks (q8_activations.hpp), in integer arithmetic up to each sub-block's
// scale.
//
// Numerics. For each unit b of 32 columns (activation block with scale dx
// and half sums S0, S1) every row computes exact integer products of its
// codes with the activations (kernels/arch/int8_*.hpp, dot_codes and dot)
// and then, in float, one rounding per operation, in this order:
//   Q4_K, Q5_K (value = d * scale * code - dmin * min):
//     acc = fma(float(sum code * x), (d * scale_b) * dx, acc)
//     acc = acc - (dmin * min_b) * (dx * float(S0 + S1))        (fused)
//   IQ4_XS (value = d * scale * codebook value):
//     acc = fma(float(sum value * x), (d * scale_b) * dx, acc)
//   Q6_K, Q3_K (value = d * scale * (code - bias), bias 32 or 4), for each
//   half h of 16 columns:
//     acc = fma(float(sum code * x - bias * S_h), (d * scale_h) * dx, acc)
//   Q2_K (value = d * scale * code - dmin * min), for each half h:
//     acc = fma(float(sum code * x), (d * scale_h) * dx, acc)
//     acc = acc - (dmin * min_h) * (dx * float(S_h))             (fused)
// d and dmin are the rows' fp16 values, scale and min their small integers;
// dx * float(S) comes with the activations (their scaled sums,
// q8_activations.hpp), rounded once there.
// Every instruction set performs exactly these operations, so results are
// the same bits everywhere; tests check each against the portable ops.
#pragma once

#include <cstdint>

#include "kernels/block_products.hpp"
#include "kernels/cache_line.hpp"
#include "kernels/int8_dot.hpp"
#include "kernels/interleave_k.hpp"
#include "kernels/q8_activations.hpp"

namespace kiln::kernels {

// The largest code of a K-quant type (AVX2 sums that many products in 16 bits).
constexpr int k_max_code(TensorType t) {
  switch (t) {
    case TensorType::Q2_K: return 3;
    case TensorType::Q3_K: return 7;
    case TensorType::Q4_K: return 15;
    case TensorType::Q5_K: return 31;
    default: return 63;  // Q6_K
  }
}

// acc[g * NVecs + t] (lane r) = dot(row r of group g, activation vector t)
// for NGroups consecutive groups and NVecs consecutive Q8 vectors of Cols
// values. The groups take turns a super-block at a time, each its own
// stream from memory; each group's lanes see the same operations in the
// same order whatever NGroups is.
template <class Ops, TensorType T, int Cols, int NGroups, int NVecs>
void dot_groups_kquant(const uint8_t* first_group, Q8In x, const int32_t* starts,
                       typename Ops::Acc (&acc)[NGroups * NVecs]) {
  static_assert(is_super_block_type(T) && Cols % kSuperBlockElems == 0 && Ops::kRows == kInterleaveRows);
  using arch::CodeSpan;
  using Acc = typename Ops::Acc;
  constexpr int R = Ops::kRows;
  constexpr int kBlocks = Cols / kQuantBlockElems;
  constexpr int kMaxCode = k_max_code(T);
  constexpr int64_t kUnitBytes = k_unit_row_bytes(T) * R;
  constexpr int64_t kGroupBytes = k_interleaved_group_bytes(T, Cols);
  // Each group's stream is asked for next_groups_ahead (cache_line.hpp),
  // each unit an eighth of a super-block's bytes, headers included (the
  // units' own lines alone left a header's lines to be read on demand).
  constexpr int64_t kPrefetchAhead = next_groups_ahead(NGroups, kGroupBytes);
  constexpr int64_t kPrefetchBytes = k_super_block_group_bytes(T) / kUnitsPerSuperBlock;

  // Accumulated in locals, as dot_groups_blocks does (dot_q8.hpp).
  Acc all_sums[NGroups * NVecs];
  for (auto& a : all_sums) a = Ops::zero();
  for (int sb = 0; sb < Cols / kSuperBlockElems; ++sb) {
    for (int g = 0; g < NGroups; ++g) {
      Acc* sums = all_sums + g * NVecs;
      const uint8_t* super = first_group + g * kGroupBytes + sb * k_super_block_group_bytes(T);
      const uint8_t* units = super + k_header_row_bytes(T) * R;
      const Acc d = Ops::weight_scales(reinterpret_cast<const uint16_t*>(super));
      for (int u = 0; u < kUnitsPerSuperBlock; ++u) {
        const uint8_t* unit = units + u * kUnitBytes;
        const uint8_t* ahead = super + kPrefetchAhead + u * kPrefetchBytes;
        prefetch_lines_to_l2(ahead, kPrefetchBytes);
        const typename Ops::Quants w = Ops::template decode_k<T>(unit);
        const int b = sb * kUnitsPerSuperBlock + u;
        // The tokens' blocks b, with their starts for the whole block or its first half.
        const TokenBlocks tokens{x.qs + b * kQuantBlockElems, Cols, starts_from<T>(starts, b),
                                 kBlocks * starts_per_block(T)};
        typename Ops::Rows dots[NVecs];
        if constexpr (T == TensorType::Q6_K || T == TensorType::Q3_K) {
          const uint8_t* scales = super + 2 * R;
          const Acc scale_low = Ops::mul(d, Ops::template byte_scales<true>(scales + 2 * u * R));
          const Acc scale_high = Ops::mul(d, Ops::template byte_scales<true>(scales + (2 * u + 1) * R));
          TokenBlocks high_half = tokens;
          ++high_half.start;
          span_products<Ops, CodeSpan::Low, kMaxCode, NVecs>(w, tokens, dots);
          for (int t = 0; t < NVecs; ++t)
            sums[t] = Ops::fma(dots[t], Ops::scales(scale_low, x.d[t * kBlocks + b]), sums[t]);
          span_products<Ops, CodeSpan::High, kMaxCode, NVecs>(w, high_half, dots);
          for (int t = 0; t < NVecs; ++t)
            sums[t] = Ops::fma(dots[t], Ops::scales(scale_high, x.d[t * kBlocks + b]), sums[t]);
        } else if constexpr (T == TensorType::Q2_K) {
          const Acc dmin = Ops::weight_scales(reinterpret_cast<const uint16_t*>(super + 2 * R));
          const uint8_t* packed = super + 4 * R;  // scale | min << 4, for each half
          const Acc scale_low = Ops::mul(d, Ops::template nibble_scales<false>(packed + 2 * u * R));
          const Acc scale_high = Ops::mul(d, Ops::template nibble_scales<false>(packed + (2 * u + 1) * R));
          const Acc min_low = Ops::mul(dmin, Ops::template nibble_scales<true>(packed + 2 * u * R));
          const Acc min_high = Ops::mul(dmin, Ops::template nibble_scales<true>(packed + (2 * u + 1) * R));
          typename Ops::Rows high[NVecs];
          span_products<Ops, CodeSpan::Low, kMaxCode, NVecs>(w, tokens, dots);
          span_products<Ops, CodeSpan::High, kMaxCode, NVecs>(w, tokens, high);
          for (int t = 0; t < NVecs; ++t) {
            const Q8In xb = x.at_block(static_cast<int64_t>(t) * kBlocks + b);
            sums[t] = Ops::fma(dots[t], Ops::scales(scale_low, *xb.d), sums[t]);
            sums[t] = Ops::fnma(min_low, xb.scaled(0), sums[t]);
            sums[t] = Ops::fma(high[t], Ops::scales(scale_high, *xb.d), sums[t]);
            sums[t] = Ops::fnma(min_high, xb.scaled(1), sums[t]);
          }
        } else if constexpr (T == TensorType::IQ4_XS) {
          const Acc scale = Ops::mul(d, Ops::template byte_scales<true>(super + 2 * R + u * R));
          block_products<Ops, TensorType::IQ4_NL, NVecs>(w, tokens, dots);
          for (int t = 0; t < NVecs; ++t)
            sums[t] = Ops::fma(dots[t], Ops::scales(scale, x.d[t * kBlocks + b]), sums[t]);
        } else {
          const Acc dmin = Ops::weight_scales(reinterpret_cast<const uint16_t*>(super + 2 * R));
          const Acc scale = Ops::mul(d, Ops::template byte_scales<false>(super + 4 * R + u * R));
          const Acc min = Ops::mul(dmin, Ops::template byte_scales<false>(super + 12 * R + u * R));
          span_products<Ops, CodeSpan::Both, kMaxCode, NVecs>(w, tokens, dots);
          for (int t = 0; t < NVecs; ++t) {
            const Q8In xb = x.at_block(static_cast<int64_t>(t) * kBlocks + b);
            sums[t] = Ops::fma(dots[t], Ops::scales(scale, *xb.d), sums[t]);
            sums[t] = Ops::fnma(min, xb.scaled(2), sums[t]);
          }
        }
      }
    }
  }
  for (int i = 0; i < NGroups * NVecs; ++i) acc[i] = all_sums[i];
}

}  // namespace kiln::kernels
