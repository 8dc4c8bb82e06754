// Float weights (F32, F16, and BF16 where vdpbf16ps is missing) times many
// tokens: the product a prompt spends its time in.
//
// Each thread copies a chunk's activations once into the order its token
// tiles read them (pack_tokens), so a tile's operands arrive as one stream.
// A row tile's weights are taken a k-block at a time: widened to floats (F16,
// BF16) or copied (F32) into a small panel that stays in the L1 cache while
// every token tile of the chunk passes over it, so a weight is widened once
// per chunk, not once per token tile. A (row, token) pair's accumulator
// waits in a per-thread buffer from one k-block to the next.
//
// Numerics: the same as dot_tile's (dot.hpp), bit for bit: one SIMD
// accumulator per (row, token) fed by FMAs in order of k, its k-blocks one
// after another, then dot_tile's own ending (finish_dot_tile: the last
// columns, the lanes' sums). Only where the operands and the accumulators
// wait differs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/dot.hpp"
#include "kernels/store.hpp"
#include "kernels/thread_buffer.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels::detail {

// The register tile: 5 rows x 5 tokens with 32 vector registers (25
// accumulators, 5 weight vectors and the activation vector they share), else
// 2 x 6 as the whole-row tiles (matmul.hpp).
inline constexpr int kPanelRowTile = kFloatRegisters >= 32 ? 5 : 2;
inline constexpr int kPanelTokenTile = kFloatRegisters >= 32 ? 5 : 6;

// Tokens per chunk, 20 token tiles: each weight, read from memory and widened
// once per chunk, meets this many. Only a k-block's slice of the chunk's
// packed activations needs to stay in L2 at a time.
inline constexpr int kFloatChunkTokens = 20 * kPanelTokenTile;

// Floats of a row per k-block: a 5-row panel is 20 KiB and stays in L1 beside
// the token tile's stream. Longer blocks save more of the accumulators'
// trips to memory between blocks, and crowd L1 more.
inline constexpr int kFloatKBlock = 1024;

struct PackedTokens;
struct FloatPanel;
struct FloatPartials;

// The values of a row of Cols in whole vectors (the rest: the scalar tail).
template <int Cols>
inline constexpr int kSimdCols = Cols / kFloatLanes * kFloatLanes;

// This thread's copy of the whole vectors of n_tokens activation vectors (x,
// Cols floats apart) in token-tile order: tiles of TokenTile tokens, then the
// leftover tokens one by one; within a tile of n tokens starting at token t0
// (at t0 * kSimdCols), vector v of token t is at (v * n + t) * kFloatLanes.
template <int Cols, int TokenTile, int Chunk>
const float* pack_tokens(const float* x, int n_tokens) {
  float* packed = thread_buffer<PackedTokens, float, int64_t{Chunk} * std::max(kSimdCols<Cols>, 1)>();
  const auto pack_tile = [&](int t0, int n) {
    float* tile = packed + int64_t{t0} * kSimdCols<Cols>;
    for (int v = 0; v < kSimdCols<Cols> / kFloatLanes; ++v)
      for (int t = 0; t < n; ++t)
        std::memcpy(tile + (v * n + t) * kFloatLanes, x + int64_t{t0 + t} * Cols + v * kFloatLanes,
                    kFloatLanes * sizeof(float));
  };
  int t0 = 0;
  for (; t0 + TokenTile <= n_tokens; t0 += TokenTile) pack_tile(t0, TokenTile);
  for (; t0 < n_tokens; ++t0) pack_tile(t0, 1);
  return packed;
}

// acc[r][t] += panel row r times token t for `vectors` vectors: panel rows
// are kFloatKBlock floats apart, the tokens packed (pack_tokens).
template <int NRows, int NTokens>
inline void panel_fmas(const float* panel, const float* tokens, int vectors, FloatVec (&acc)[NRows][NTokens]) {
  for (int v = 0; v < vectors; ++v) {
    FloatVec wk[NRows];
    for (int r = 0; r < NRows; ++r) wk[r] = FloatVec::load_aligned(panel + r * kFloatKBlock + v * kFloatLanes);
    for (int t = 0; t < NTokens; ++t) {
      FloatVec xk = FloatVec::load_aligned(tokens + (v * NTokens + t) * kFloatLanes);
      keep_in_register(xk);  // one load for NRows FMAs, not one per FMA
      for (int r = 0; r < NRows; ++r) acc[r][t] = xsimd::fma(wk[r], xk, acc[r][t]);
    }
  }
}

// One k-block (from k0) of rows r0 .. r0 + NRows - 1 (rows: their weights)
// and tokens t0 .. t0 + NTokens - 1 of a chunk (packed, x, y: the chunk's
// token 0). The first block starts the accumulators, the last one sums them
// into y; between blocks they wait in `partials` ([token][row] vectors).
template <TensorType T, int Rows, int Cols, Store S, int NRows, int NTokens>
void panel_tile(const float* panel, const uint8_t* rows, int r0, int t0, int k0, const float* packed, const float* x,
                float* partials, float* y) {
  constexpr int kWhole = kSimdCols<Cols>;
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
  const bool first = k0 == 0, last = k0 + kFloatKBlock >= kWhole;
  const int vectors = (std::min(k0 + kFloatKBlock, kWhole) - k0) / kFloatLanes;
  float* saved = partials + int64_t{t0} * NRows * kFloatLanes;

  FloatVec acc[NRows][NTokens];
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t)
      acc[r][t] = first ? FloatVec(0.0f) : FloatVec::load_aligned(saved + (t * NRows + r) * kFloatLanes);
  panel_fmas(panel, packed + int64_t{t0} * kWhole + int64_t{k0} * NTokens, vectors, acc);
  if (!last) {
    for (int r = 0; r < NRows; ++r)
      for (int t = 0; t < NTokens; ++t) acc[r][t].store_aligned(saved + (t * NRows + r) * kFloatLanes);
    return;
  }
  float sums[NRows][NTokens];
  finish_dot_tile<T, Cols, NRows, NTokens, kRowBytes>(acc, rows, x + int64_t{t0} * Cols, sums);
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t) {
      float& dst = y[int64_t{t0 + t} * Rows + r0 + r];
      dst = S == Store::Add ? dst + sums[r][t] : sums[r][t];
    }
}

// Rows r0 .. r0 + NRows - 1 for a chunk's n_tokens tokens (at most Chunk).
template <TensorType T, int Rows, int Cols, Store S, int NRows, int TokenTile, int Chunk>
void matmul_panel_rows(const uint8_t* w, int r0, const float* packed, const float* x, float* y, int n_tokens) {
  constexpr int kWhole = kSimdCols<Cols>;
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
  const uint8_t* rows = w + r0 * kRowBytes;
  float* panel = thread_buffer<FloatPanel, float, int64_t{NRows} * kFloatKBlock>();
  float* partials = thread_buffer<FloatPartials, float, int64_t{Chunk} * NRows * kFloatLanes>();
  // At least one block: with fewer values than a vector, it only ends the sums.
  for (int k0 = 0; k0 == 0 || k0 < kWhole; k0 += kFloatKBlock) {
    for (int r = 0; r < NRows; ++r)
      for (int k = k0; k < std::min(k0 + kFloatKBlock, kWhole); k += kFloatLanes)
        WeightRow<T>::load(rows + r * kRowBytes, k).store_aligned(panel + r * kFloatKBlock + k - k0);
    int t0 = 0;
    for (; t0 + TokenTile <= n_tokens; t0 += TokenTile)
      panel_tile<T, Rows, Cols, S, NRows, TokenTile>(panel, rows, r0, t0, k0, packed, x, partials, y);
    for (; t0 < n_tokens; ++t0) panel_tile<T, Rows, Cols, S, NRows, 1>(panel, rows, r0, t0, k0, packed, x, partials, y);
  }
}

// The rows of row tile `tile` (the last one may be partial) for a chunk's
// tokens: packed by pack_tokens<Cols, TokenTile, Chunk>, x as they came.
template <TensorType T, int Rows, int Cols, Store S, int RowTile, int TokenTile, int Chunk>
void matmul_panel_row_tile(const uint8_t* w, int tile, const float* packed, const float* x, float* y, int n_tokens) {
  const int r0 = tile * RowTile;
  if (r0 + RowTile <= Rows) {
    matmul_panel_rows<T, Rows, Cols, S, RowTile, TokenTile, Chunk>(w, r0, packed, x, y, n_tokens);
  } else {
    for (int r = r0; r < Rows; ++r) matmul_panel_rows<T, Rows, Cols, S, 1, TokenTile, Chunk>(w, r, packed, x, y, n_tokens);
  }
}

}  // namespace kiln::kernels::detail
