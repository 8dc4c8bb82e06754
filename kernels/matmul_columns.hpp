// The matmul of F32 matrices stored in column panels (float_columns.hpp):
// short rows, as in tiny models, for one token or many.
//
// Numerics: row r's result for a token is a sum over blocks of 32 columns,
// added in order onto zero. Within a block, column k feeds partial sum
// k % 4 by FMAs in order of k (the first onto zero), and the block's sum is
// (s0 + s1) + (s2 + s3). So each sum has about as many roundings as the dot
// products of rows (dot.hpp). Each lane of a vector is one row's, so the
// result is the same bits whichever rows, tokens and threads share a tile.
// The four chains give a single group of rows four FMAs in flight.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/arch/simd.hpp"
#include "kernels/float_columns.hpp"
#include "kernels/store.hpp"

namespace kiln::kernels::detail {

inline constexpr int kColumnChains = 4;
inline constexpr int kColumnBlock = 32;

// Register tiles (groups x tokens; four accumulators and a running sum
// each): one token over up to kColumnGroups groups (generation), or
// kColumnTileGroups groups x kColumnTileTokens tokens (prompts).
inline constexpr int kColumnGroups = kFloatRegisters >= 32 ? 4 : 2;
inline constexpr int kColumnTileGroups = kFloatRegisters >= 32 ? 2 : 1;
inline constexpr int kColumnTileTokens = 2;

// y for the rows of NGroups groups from g0 and NTokens tokens from t0.
template <int Rows, int Cols, Store S, int NGroups, int NTokens>
void column_tile(const float* w, int g0, int t0, const float* x, float* y) {
  constexpr int L = kFloatLanes;
  const float* panels = w + int64_t{g0} * Cols * L;
  const float* tokens = x + int64_t{t0} * Cols;
  FloatVec total[NGroups][NTokens];
  for (auto& group : total)
    for (auto& token : group) token = FloatVec(0.0f);
  for (int k0 = 0; k0 < Cols; k0 += kColumnBlock) {
    FloatVec acc[NGroups][NTokens][kColumnChains];
    for (auto& group : acc)
      for (auto& token : group)
        for (auto& chain : token) chain = FloatVec(0.0f);
    // Column k0 + 4i + c into chain c: c a constant, so the chains stay in registers.
    const int end = std::min(k0 + kColumnBlock, Cols);
    for (int k = k0; k < end; k += kColumnChains)
      for (int c = 0; c < kColumnChains; ++c) {
        if (k + c >= end) break;
        FloatVec xk[NTokens];
        for (int t = 0; t < NTokens; ++t) xk[t] = FloatVec(tokens[int64_t{t} * Cols + k + c]);
        for (int g = 0; g < NGroups; ++g) {
          const FloatVec wk = FloatVec::load_unaligned(panels + (int64_t{g} * Cols + k + c) * L);
          for (int t = 0; t < NTokens; ++t) acc[g][t][c] = xsimd::fma(wk, xk[t], acc[g][t][c]);
        }
      }
    for (int g = 0; g < NGroups; ++g)
      for (int t = 0; t < NTokens; ++t) {
        const FloatVec block = (acc[g][t][0] + acc[g][t][1]) + (acc[g][t][2] + acc[g][t][3]);
        total[g][t] += block;
      }
  }
  for (int g = 0; g < NGroups; ++g) {
    const int r0 = (g0 + g) * L;
    const int n_rows = std::min(L, Rows - r0);
    for (int t = 0; t < NTokens; ++t) {
      float* dst = y + int64_t{t0 + t} * Rows + r0;
      if (n_rows == L) {
        (S == Store::Add ? FloatVec::load_unaligned(dst) + total[g][t] : total[g][t]).store_unaligned(dst);
      } else {
        alignas(FloatVec::arch_type::alignment()) float lanes[L];
        total[g][t].store_aligned(lanes);
        for (int i = 0; i < n_rows; ++i) dst[i] = S == Store::Add ? dst[i] + lanes[i] : lanes[i];
      }
    }
  }
}

// Tokens t0 .. n_tokens - 1 for NGroups groups from g0: kColumnTileTokens
// at a time, then one by one.
template <int Rows, int Cols, Store S, int NGroups>
void column_unit(const float* w, int g0, const float* x, float* y, int n_tokens) {
  int t = 0;
  for (; t + kColumnTileTokens <= n_tokens; t += kColumnTileTokens)
    column_tile<Rows, Cols, S, NGroups, kColumnTileTokens>(w, g0, t, x, y);
  for (; t < n_tokens; ++t) column_tile<Rows, Cols, S, NGroups, 1>(w, g0, t, x, y);
}

// y = W x (or y += W x) for n_tokens tokens, W in column panels. Work-shared
// over units of groups: kColumnGroups per unit for fewer tokens than a tile,
// kColumnTileGroups for more; the last unit takes the groups left.
template <int Rows, int Cols, Store S>
void matmul_columns(const float* w, const float* x, float* y, int n_tokens) {
  constexpr int kGroups = static_cast<int>(float_column_groups(Rows));
  const auto share = [&]<int PerUnit>() {
    constexpr int kWhole = kGroups / PerUnit, kLeft = kGroups % PerUnit;
    constexpr int kUnits = kWhole + (kLeft > 0 ? 1 : 0);
#pragma omp for schedule(static) nowait
    for (int unit = 0; unit < kUnits; ++unit) {
      if (unit < kWhole) {
        column_unit<Rows, Cols, S, PerUnit>(w, unit * PerUnit, x, y, n_tokens);
      } else if constexpr (kLeft > 0) {
        column_unit<Rows, Cols, S, kLeft>(w, kWhole * PerUnit, x, y, n_tokens);
      }
    }
  };
  if (n_tokens < kColumnTileTokens)
    share.template operator()<std::min(kColumnGroups, kGroups)>();
  else
    share.template operator()<std::min(kColumnTileGroups, kGroups)>();
}

}  // namespace kiln::kernels::detail
