// Weight matrix times activations, and embedding lookup.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/bf16_pairs.hpp"
#include "kernels/dot.hpp"
#include "kernels/dot_q8.hpp"
#include "kernels/float_rows.hpp"
#include "kernels/matmul_columns.hpp"
#include "kernels/matmul_float.hpp"
#include "kernels/quant.hpp"
#include "kernels/store.hpp"
#include "kernels/sync.hpp"
#include "kernels/team.hpp"
#include "kernels/thread_buffer.hpp"

namespace kiln::kernels {

// The activations a matmul multiplies, in the forms weight types read:
// floats for float weights, Q8-rounded for the quantized types (reads_q8). Both
// are [n_tokens][Cols]; only the form the weight type reads must be filled.
struct MatmulInput {
  const float* f;
  Q8In q8;

  // The input from token t on, for inputs of Cols values.
  template <int Cols>
  MatmulInput from_token(int t) const {
    const int64_t at = static_cast<int64_t>(t) * Cols;
    return {f + at, q8.qs ? q8.at_block(at / kQuantBlockElems) : q8};
  }
};

namespace detail {

// Float weights with fewer tokens than this (generation) take whole rows a
// token at a time; more go through panels (matmul_float.hpp).
inline constexpr int kMatmulTokenTile = 6;
// Generation: a row stream from memory and an FMA chain per row, as many
// rows as registers allow: 16 with 32 registers, whose sums then take one
// sum_each tree (dot.hpp) where 8 rows took one for 16 accumulators, half of
// them zero (fewer would leave AVX-512 reading F16 slower;
// docs/benchmarks.md), 4 with 16.
inline constexpr int kVectorRowTile = kFloatRegisters >= 32 ? 16 : 4;

// y for rows r0 .. r0 + NRows - 1 and token t, from float activations or
// (reads_bf16) rounded ones.
template <TensorType T, int Rows, int Cols, Store S, int NRows, class X>
void matmul_rows_token(const uint8_t* w, int r0, int t, const X* x, float* y) {
  constexpr int64_t kRowBytes = float_row_stride(T, Cols);
  float out[NRows][1];
  const uint8_t* rows = w + r0 * kRowBytes;
  const X* vector = x + static_cast<int64_t>(t) * Cols;
#ifdef KILN_BF16_PAIRS
  if constexpr (std::is_same_v<X, uint16_t>)
    dot_tile_bf16<Cols, NRows, 1, kRowBytes>(rows, vector, out);
  else
#endif
    dot_tile<T, Cols, NRows, 1, kRowBytes>(rows, vector, out);
  for (int r = 0; r < NRows; ++r) {
    float& dst = y[static_cast<int64_t>(t) * Rows + r0 + r];
    dst = S == Store::Add ? dst + out[r][0] : out[r][0];
  }
}

// The rows of one row tile (the last one may be partial: one tile of the
// rows left) for every token, one at a time.
template <TensorType T, int Rows, int Cols, Store S, int RowTile, class X>
void matmul_row_tile(const uint8_t* w, int tile, const X* x, float* y, int n_tokens) {
  const int r0 = tile * RowTile;
  if constexpr (Rows >= RowTile) {
    if (r0 + RowTile <= Rows) {
      for (int t = 0; t < n_tokens; ++t) matmul_rows_token<T, Rows, Cols, S, RowTile>(w, r0, t, x, y);
      return;
    }
  }
  if constexpr (Rows % RowTile != 0)
    for (int t = 0; t < n_tokens; ++t) matmul_rows_token<T, Rows, Cols, S, Rows % RowTile>(w, r0, t, x, y);
}

// Quantized weights: a group of interleaved rows for a tile of tokens at a
// time, so decoding a weight block is shared by the tile: 6 tokens token by
// token (of 2..6, 6 measured best on AVX2 for both Q8_0 and Q4_0, 256 x 2048
// times 512 tokens), 12 where the instruction set multiplies them together
// (kernels/block_products.hpp).
inline constexpr int kQ8TokenTile = NativeInt8Ops::kTokenTile;
// The tokens left after whole tiles go in tiles of this many (if fewer than
// a tile), then one by one; fewer tokens than this in all take the
// generation path (matmul_vector_groups).
inline constexpr int kQ8RestTile = NativeInt8Ops::kRestTile;

// Token t's results for the rows of interleaved group g, stored or added.
template <int Rows, Store S>
void store_group(const NativeInt8Ops::Acc& acc, int g, int t, float* y) {
  const int r0 = g * kInterleaveRows;
  const int n_rows = Rows - r0 < kInterleaveRows ? Rows - r0 : kInterleaveRows;
  float* dst = y + static_cast<int64_t>(t) * Rows + r0;
  if constexpr (S == Store::Add)
    NativeInt8Ops::add(acc, dst, n_rows);
  else
    NativeInt8Ops::store(acc, dst, n_rows);
}

// y for the rows of interleaved group g and tokens t0 .. t0 + NTokens - 1.
template <TensorType T, int Rows, int Cols, Store S, int NTokens>
void matmul_group_tile(const uint8_t* group, int g, int t0, Q8In x, const int32_t* starts, float* y) {
  using Ops = NativeInt8Ops;
  typename Ops::Acc acc[NTokens];
  const int64_t first_block = static_cast<int64_t>(t0) * (Cols / kQuantBlockElems);
  dot_group_q8<Ops, T, Cols, NTokens>(group, x.at_block(first_block), starts_from<T>(starts, first_block), acc);
  for (int t = 0; t < NTokens; ++t) store_group<Rows, S>(acc[t], g, t0 + t, y);
}

// Fewer tokens than a tile (generation): one token at a time over
// vector_groups(T) groups of rows at once, block by block (super-block by
// super-block for the K-quants). A group is one stream from memory, asked
// for ahead (dot_q8.hpp, dot_kquant.hpp). The types with the most bytes per
// block of a row read fastest one group at a time; those with fewer bytes,
// thus more arithmetic per byte, keep too few reads in flight that way and
// read faster two or four groups at a time (docs/benchmarks.md, "groups per
// K-quant stream" and "the 32-value types' scales inline").
constexpr int vector_groups(TensorType t) {
  switch (t) {
    case TensorType::Q8_0:
    case TensorType::Q6_K:
    case TensorType::Q5_K:
    case TensorType::Q4_K: return 1;
    case TensorType::Q3_K:
    case TensorType::IQ4_XS: return 2;
    default: return 4;
  }
}

// y for token t and the rows of NGroups interleaved groups from g0.
template <TensorType T, int Rows, int Cols, Store S, int NGroups>
void matmul_groups_token(const uint8_t* w, int g0, int t, Q8In x, const int32_t* starts, float* y) {
  using Ops = NativeInt8Ops;
  typename Ops::Acc acc[NGroups];
  const int64_t first_block = static_cast<int64_t>(t) * (Cols / kQuantBlockElems);
  dot_groups_q8<Ops, T, Cols, NGroups, 1>(w + g0 * interleaved_group_bytes(T, Cols), x.at_block(first_block),
                                          starts_from<T>(starts, first_block), acc);
  for (int i = 0; i < NGroups; ++i) store_group<Rows, S>(acc[i], g0 + i, t, y);
}

// Units of vector_groups(T) groups (the last ones single groups), every token
// on its own; work-shared over units.
template <TensorType T, int Rows, int Cols, Store S>
void matmul_vector_groups(const uint8_t* w, Q8In x, const int32_t* starts, float* y, int n_tokens) {
  constexpr int kGroups = static_cast<int>(interleaved_groups(Rows));
  constexpr int kGroupsAtOnce = vector_groups(T);
  constexpr int kWhole = kGroups / kGroupsAtOnce, kSingles = kGroups % kGroupsAtOnce;
#pragma omp for schedule(static) nowait
  for (int unit = 0; unit < kWhole + kSingles; ++unit)
    for (int t = 0; t < n_tokens; ++t) {
      if (unit < kWhole)
        matmul_groups_token<T, Rows, Cols, S, kGroupsAtOnce>(w, unit * kGroupsAtOnce, t, x, starts, y);
      else
        matmul_groups_token<T, Rows, Cols, S, 1>(w, kWhole * kGroupsAtOnce + unit - kWhole, t, x, starts, y);
    }
}

// The rows of interleaved group g for every token: whole tiles, then tiles
// of kQ8RestTile, then one by one.
template <TensorType T, int Rows, int Cols, Store S>
void matmul_group(const uint8_t* w, int g, Q8In x, const int32_t* starts, float* y, int n_tokens) {
  const uint8_t* group = w + g * interleaved_group_bytes(T, Cols);
  int t0 = 0;
  for (; t0 + kQ8TokenTile <= n_tokens; t0 += kQ8TokenTile)
    matmul_group_tile<T, Rows, Cols, S, kQ8TokenTile>(group, g, t0, x, starts, y);
  if constexpr (kQ8RestTile < kQ8TokenTile)
    for (; t0 + kQ8RestTile <= n_tokens; t0 += kQ8RestTile)
      matmul_group_tile<T, Rows, Cols, S, kQ8RestTile>(group, g, t0, x, starts, y);
  for (; t0 < n_tokens; ++t0) matmul_group_tile<T, Rows, Cols, S, 1>(group, g, t0, x, starts, y);
}

// The kind of panel a prompt's float weights of type T take (matmul_float.hpp).
template <TensorType T>
using PanelsOf =
#ifdef KILN_BF16_PAIRS
    std::conditional_t<reads_bf16(T), Bf16PairPanels, FloatPanels>;
#else
    FloatPanels;
#endif

// Tokens per chunk: about 128 KiB of rounded activations, a whole number of
// tiles; float weights' panels have their own (matmul_float.hpp).
template <TensorType T, int Cols>
constexpr int token_chunk() {
  if constexpr (!reads_q8(T)) {
    return kPanelChunkTokens<PanelsOf<T>, Cols>;
  } else {
    constexpr int64_t kChunkBytes = 128 * 1024;
    constexpr int64_t kTokenBytes = Cols + Cols / kQuantBlockElems * 4 + Cols / kQ8HalfElems * 4;
    constexpr int64_t kTiles = kChunkBytes / kTokenBytes / kQ8TokenTile;
    return static_cast<int>(kTiles > 0 ? kTiles * kQ8TokenTile : kQ8TokenTile);
  }
}

struct RoundedChunk;
struct ChunkStarts;

// This thread's copy of a chunk's chain starts (kernels/block_products.hpp),
// for the types whose products start from one: each thread computes the
// whole chunk's for itself, no barrier.
template <TensorType T, int Cols, int Chunk>
const int32_t* chunk_starts(Q8In x, int n_tokens) {
  if constexpr (code_bias(T) == 0) {
    (void)x, (void)n_tokens;
    return nullptr;
  } else {
    constexpr int64_t kBlocks = Cols / kQuantBlockElems;
    int32_t* starts = thread_buffer<ChunkStarts, int32_t, Chunk * kBlocks * starts_per_block(T)>();
    chain_starts<T>(x, n_tokens * kBlocks, starts);
    return starts;
  }
}

// What the row tiles of float weights read: the activations, or for
// reads_bf16 this thread's rounded copy of them (bfloat16 for vdpbf16ps,
// else floats). Each thread rounds the whole chunk for itself: no barrier,
// and little work beside the chunk's products with its rows.
template <TensorType T, int Cols, int Chunk>
auto row_tile_input(const float* x, int n_tokens) {
  if constexpr (!reads_bf16(T)) {
    (void)n_tokens;
    return x;
  } else if constexpr (kBf16Pairs) {
#ifdef KILN_BF16_PAIRS
    uint16_t* rounded = thread_buffer<RoundedChunk, uint16_t, int64_t{Chunk} * Cols>();
    round_to_bf16(x, rounded, int64_t{n_tokens} * Cols);
    return static_cast<const uint16_t*>(rounded);
#endif
  } else {
    float* rounded = thread_buffer<RoundedChunk, float, int64_t{Chunk} * Cols>();
    round_through_bf16(x, rounded, int64_t{n_tokens} * Cols);
    return static_cast<const float*>(rounded);
  }
}

// The work shared out among threads: row tiles of RowTile rows (float
// weights) or interleaved groups (quantized weights), in chunks of tokens
// whose activations stay in the core's L2 cache while every weight row passes
// over them. Each thread gets the same rows in every chunk and chunks write
// different tokens, so no chunk waits for another. A prompt's float
// activations go through panels (matmul_float.hpp).
template <TensorType T, int Rows, int Cols, Store S, bool Prompt>
void matmul_units(const uint8_t* w, const MatmulInput& x, float* y, int n_tokens) {
  constexpr bool kPanels = Prompt && !reads_q8(T);
  constexpr int RowTile = reads_q8(T) ? kInterleaveRows : kPanels ? kPanelRowTile : kVectorRowTile;
  constexpr int kUnits = reads_q8(T) ? static_cast<int>(interleaved_groups(Rows)) : (Rows + RowTile - 1) / RowTile;
  constexpr int kChunk = token_chunk<T, Cols>();
  for (int t0 = 0; t0 < n_tokens; t0 += kChunk) {
    const int n = std::min(kChunk, n_tokens - t0);
    const MatmulInput chunk = x.from_token<Cols>(t0);
    float* y_chunk = y + static_cast<int64_t>(t0) * Rows;
    if constexpr (reads_q8(T)) {
      const int32_t* starts = chunk_starts<T, Cols, kChunk>(chunk.q8, n);
      if (n < kQ8RestTile) {
        matmul_vector_groups<T, Rows, Cols, S>(w, chunk.q8, starts, y_chunk, n);
        continue;
      }
#pragma omp for schedule(static) nowait
      for (int unit = 0; unit < kUnits; ++unit)
        matmul_group<T, Rows, Cols, S>(w, unit, chunk.q8, starts, y_chunk, n);
    } else if constexpr (kPanels) {
      using Kind = PanelsOf<T>;
      const auto* vectors = row_tile_input<T, Cols, kChunk>(chunk.f, n);
      const auto* packed = pack_tokens<Kind, Cols, kPanelTokenTile, kChunk>(vectors, n);
#pragma omp for schedule(static) nowait
      for (int unit = 0; unit < kUnits; ++unit)
        matmul_panel_row_tile<Kind, T, Rows, Cols, S, RowTile, kPanelTokenTile, kChunk>(w, unit, packed, vectors,
                                                                                         y_chunk, n);
    } else {
      const auto* vectors = row_tile_input<T, Cols, kChunk>(chunk.f, n);
#pragma omp for schedule(static) nowait
      for (int unit = 0; unit < kUnits; ++unit) matmul_row_tile<T, Rows, Cols, S, RowTile>(w, unit, vectors, y_chunk, n);
    }
  }
}

}  // namespace detail

// y[t][r] = sum_k W[r][k] * x[t][k] for t < n_tokens (or y[t][r] += that);
// W is Rows rows of Cols elements of type T, in the layout pack_matrix gives
// it (interleave.hpp): interleaved for the quantized types, column panels for
// F32 rows shorter than kFloatColumnsMaxCols, else GGUF's; x is [n_tokens][Cols],
// y [n_tokens][Rows]. Call from all threads of a parallel region (or from
// serial code): the rows are shared out among them.
template <TensorType T, int Rows, int Cols, Store S = Store::Replace, Sync Y = Sync::Barrier>
void matmul(const void* w, const MatmulInput& x, float* y, int n_tokens) {
  static_assert(Rows > 0 && Cols > 0 && Cols % traits_of(T).block_elems == 0);
  const auto* weights = static_cast<const uint8_t*>(w);
  // One instantiation for quantized weights whatever the number of tokens:
  // Prompt only chooses float weights' tiles.
  if constexpr (in_float_columns(T, Cols))
    detail::matmul_columns<Rows, Cols, S>(static_cast<const float*>(w), x.f, y, n_tokens);
  else if (reads_q8(T) || n_tokens >= detail::kMatmulTokenTile)
    detail::matmul_units<T, Rows, Cols, S, true>(weights, x, y, n_tokens);
  else if constexpr (!reads_q8(T))
    detail::matmul_units<T, Rows, Cols, S, false>(weights, x, y, n_tokens);
  if constexpr (Y == Sync::Barrier) team_barrier();
}

// out[t] = row ids[t] of W (Cols elements of type T per row), as floats.
template <TensorType T, int Cols>
void get_rows(const void* w, const int32_t* ids, int n_tokens, float* out) {
  const auto* rows = static_cast<const uint8_t*>(w);
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t)
    dequantize_row(T, rows + ids[t] * kRowBytes, out + static_cast<int64_t>(t) * Cols, Cols);
  team_barrier();
}

}  // namespace kiln::kernels
