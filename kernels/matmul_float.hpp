// Float weights (F32, F16, BF16) times many tokens: the product a prompt
// spends its time in.
//
// Each thread copies a chunk's activations once into the order its token
// tiles read them (pack_tokens), so a tile's operands arrive as one stream.
// A row tile's weights are taken a k-block at a time into a small panel that
// stays in the L1 cache while every token tile of the chunk passes over it:
// widened to floats (F16, BF16) or copied (F32), or, where the CPU multiplies
// bfloat16 pairs (bf16_pairs.hpp), copied as they are. So a weight is read
// and widened once per chunk, not once per token tile. A (row, token) pair's
// accumulator waits in a per-thread buffer from one k-block to the next.
//
// What differs between the two kinds of panel (FloatPanels here,
// Bf16PairPanels in bf16_pairs.hpp) is what a vector holds, its
// multiply-add and how a tile's sums end.
//
// Numerics: the same as the kind's whole-row tile's, bit for bit (dot_tile
// in dot.hpp, dot_tile_bf16): one SIMD accumulator per (row, token) fed in
// order of k, its k-blocks one after another, then the same ending
// (finish_dot_tile for floats: the last columns, the lanes' sums). Only
// where the operands and the accumulators wait differs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/arch/float_panel.hpp"
#include "kernels/cache_line.hpp"
#include "kernels/dot.hpp"
#include "kernels/float_rows.hpp"
#include "kernels/store.hpp"
#include "kernels/thread_buffer.hpp"
#include "kernels/weight_row.hpp"

namespace kiln::kernels::detail {

// The register tile: 5 rows x 5 tokens with 32 vector registers (25
// accumulators, 5 weight vectors and the activation vector they share), else
// 6 rows x 2 tokens (12 accumulators, the 2 tokens' vectors and the weight
// vector they share). The panel's rows come from L1 and the tokens from L2
// (or beyond): more rows per tile is fewer of the slower reads per
// multiply-add, which 16 registers only allow with the tokens held.
inline constexpr int kPanelRowTile = kFloatRegisters >= 32 ? 5 : 6;
inline constexpr int kPanelTokenTile = kFloatRegisters >= 32 ? 5 : 2;

// Bytes of a row's panel per k-block (1024 floats, 2048 bfloat16 values): a
// 5-row panel is 20 KiB (a 6-row one 24 KiB) and stays in L1 beside the
// token tile's stream. Longer blocks save more of the accumulators' trips to
// memory between blocks, and crowd L1 more.
inline constexpr int kPanelBlockBytes = 4096;

// Float panels: weights widened to floats, FMAs; the columns after the last
// whole vector are finish_dot_tile's.
struct FloatPanels {
  using Elem = float;
  using Vec = FloatVec;
  using Acc = FloatVec;
  static constexpr int kElems = kFloatLanes;
  template <int Cols>
  static constexpr int kVectors = Cols / kFloatLanes;

  static Vec load(const float* p) { return FloatVec::load_aligned(p); }
  static void keep(Vec& v) { keep_in_register(v); }
  static Acc zero() { return FloatVec(0.0f); }
  static Acc load_acc(const float* p) { return FloatVec::load_aligned(p); }
  static void store_acc(const Acc& a, float* p) { a.store_aligned(p); }
  static Acc madd(const Acc& acc, const Vec& w, const Vec& x) { return xsimd::fma(w, x, acc); }

  // Vector v of a weight row, widened.
  template <TensorType T, int Cols>
  static void fill(const uint8_t* row, int v, float* out) {
    WeightRow<T>::load(row, int64_t{v} * kFloatLanes).store_aligned(out);
  }
  // Vector v of an activation row.
  template <int Cols>
  static void pack(const float* x, int v, float* out) {
    std::memcpy(out, x + v * kFloatLanes, kFloatLanes * sizeof(float));
  }
  template <TensorType T, int Cols, int NRows, int NTokens, int64_t RowBytes>
  static void finish(Acc (&acc)[NRows][NTokens], const uint8_t* rows, const float* x, float (&sums)[NRows][NTokens]) {
    finish_dot_tile<T, Cols, NRows, NTokens, RowBytes>(acc, rows, x, sums);
  }
};

// Tokens per chunk: each weight, read from memory and widened once per
// chunk, meets this many. 20 token tiles, or fewer where the chunk's packed
// activations would pass 1 MiB: every row tile reads all of them, and
// beyond the L2 cache they come from L3 at a rate the FMAs outrun
// (docs/benchmarks.md, "panel chunks").
template <class Kind, int Cols>
inline constexpr int kPanelChunkTokens = [] {
  constexpr int64_t kBytes = int64_t{1} << 20;
  constexpr int64_t kTileBytes =
      int64_t{kPanelTokenTile} * std::max(Kind::template kVectors<Cols>, 1) * Kind::kElems * sizeof(typename Kind::Elem);
  return static_cast<int>(std::clamp<int64_t>(kBytes / kTileBytes, 1, 20)) * kPanelTokenTile;
}();

struct PackedTokens;
struct Panel;
struct PanelPartials;

// This thread's copy of the panel vectors of n_tokens activation vectors (x,
// Cols apart) in token-tile order: tiles of TokenTile tokens, then the
// leftover tokens one by one; within a tile of n tokens starting at token t0
// (at t0 * kVectors * kElems), vector v of token t is at (v * n + t) * kElems.
template <class Kind, int Cols, int TokenTile, int Chunk>
const typename Kind::Elem* pack_tokens(const typename Kind::Elem* x, int n_tokens) {
  using Elem = typename Kind::Elem;
  constexpr int kVectors = Kind::template kVectors<Cols>, kElems = Kind::kElems;
  Elem* packed = thread_buffer<PackedTokens, Elem, int64_t{Chunk} * std::max(kVectors * kElems, 1)>();
  const auto pack_tile = [&](int t0, int n) {
    Elem* tile = packed + int64_t{t0} * kVectors * kElems;
    for (int v = 0; v < kVectors; ++v)
      for (int t = 0; t < n; ++t) Kind::template pack<Cols>(x + int64_t{t0 + t} * Cols, v, tile + (v * n + t) * kElems);
  };
  int t0 = 0;
  for (; t0 + TokenTile <= n_tokens; t0 += TokenTile) pack_tile(t0, TokenTile);
  for (; t0 < n_tokens; ++t0) pack_tile(t0, 1);
  return packed;
}

// Vectors of a row's panel per k-block.
template <class Kind>
inline constexpr int kBlockVectors = kPanelBlockBytes / static_cast<int>(Kind::kElems * sizeof(typename Kind::Elem));

// The weight bytes a panel takes from each of its rows for the k-block
// from vector v0 on.
template <class Kind, TensorType T, int Cols>
constexpr int64_t panel_source_bytes(int v0) {
  constexpr int kVectors = Kind::template kVectors<Cols>;
  const int vectors = std::min(v0 + kBlockVectors<Kind>, kVectors) - v0;
  return static_cast<int64_t>(row_bytes(T, int64_t{vectors} * Kind::kElems));
}

// The next panel's weights, asked for into L2 while the token tiles of the
// current one run: filled from memory without it, the panel waited on every
// line. Its cache lines are spread over the tiles and, within a tile, over
// its steps along k: asked for in a burst at the start of each tile, they
// gained nothing (docs/benchmarks.md, "next weights asked for ahead").
class PanelPrefetch {
 public:
  // NRows rows from `first`, row_stride apart, `bytes` each; `tiles` token
  // tiles to spread them over.
  PanelPrefetch(const uint8_t* first, int64_t row_stride, int64_t bytes, int n_rows, int tiles)
      : first_(first), row_stride_(row_stride), row_lines_((bytes + kCacheLineBytes - 1) / kCacheLineBytes),
        lines_(n_rows * row_lines_), tiles_(tiles) {}

  // Starts the next tile's share of the lines, spread over `steps` steps.
  void start_tile(int steps) {
    ++tile_;
    share_ = lines_ * tile_ / tiles_ - issued_;
    steps_ = steps;
    carry_ = 0;
  }
  // One step of the tile: the lines that fall to it (Bresenham's spacing).
  void step() {
    for (carry_ += share_; carry_ >= steps_; carry_ -= steps_) {
      prefetch_to_l2(first_ + row_ * row_stride_ + line_ * kCacheLineBytes);
      ++issued_;
      if (++line_ == row_lines_) line_ = 0, ++row_;
    }
  }

 private:
  const uint8_t* first_;
  int64_t row_stride_, row_lines_, lines_;
  int tiles_, tile_ = 0;
  int64_t steps_ = 1, share_ = 0, carry_ = 0, issued_ = 0, row_ = 0, line_ = 0;
};

// acc[r][t] += panel row r times token t for `vectors` vectors: panel rows
// are a k-block apart, the tokens packed (pack_tokens); `next` takes a
// step per vector. The side with fewer vectors per step is held in
// registers and each vector of the other is loaded once for all of them.
template <class Kind, int NRows, int NTokens>
inline void panel_products(const typename Kind::Elem* panel, const typename Kind::Elem* tokens, int vectors,
                           typename Kind::Acc (&acc)[NRows][NTokens], PanelPrefetch& next) {
  using Vec = typename Kind::Vec;
  using Pairs = arch::FloatPanelPairs<NRows, NTokens>;
  constexpr int kElems = Kind::kElems, kRowElems = kBlockVectors<Kind> * kElems;
  int v = 0;
  if constexpr (std::is_same_v<Kind, FloatPanels> && Pairs::kExists) {
    // Two k-vectors a pass, written by hand (kernels/arch/float_panel.hpp);
    // a last odd one in the loop below.
    next.start_tile((vectors + 1) / 2);
    v = vectors / 2 * 2;
    Pairs::template run<kRowElems * sizeof(float)>(panel, tokens, vectors / 2, acc, [&] { next.step(); });
  } else {
    next.start_tile(vectors);
  }
  for (; v < vectors; ++v) {
    next.step();
    const auto weight = [&](int r) { return Kind::load(panel + r * kRowElems + v * kElems); };
    const auto token = [&](int t) { return Kind::load(tokens + (v * NTokens + t) * kElems); };
    if constexpr (NRows <= NTokens) {
      Vec wk[NRows];
      for (int r = 0; r < NRows; ++r) wk[r] = weight(r);
      for (int t = 0; t < NTokens; ++t) {
        Vec xk = token(t);
        Kind::keep(xk);  // one load for NRows products, not one per product
        for (int r = 0; r < NRows; ++r) acc[r][t] = Kind::madd(acc[r][t], wk[r], xk);
      }
    } else {
      Vec xk[NTokens];
      for (int t = 0; t < NTokens; ++t) xk[t] = token(t);
      for (int r = 0; r < NRows; ++r) {
        Vec wk = weight(r);
        Kind::keep(wk);  // one load for NTokens products
        for (int t = 0; t < NTokens; ++t) acc[r][t] = Kind::madd(acc[r][t], wk, xk[t]);
      }
    }
  }
}

// One k-block (from vector v0) of rows r0 .. r0 + NRows - 1 (rows: their
// weights) and tokens t0 .. t0 + NTokens - 1 of a chunk (packed, x, y: the
// chunk's token 0). The first block starts the accumulators, the last one
// sums them into y; between blocks they wait in `partials` ([token][row]
// accumulators).
template <class Kind, TensorType T, int Rows, int Cols, Store S, int NRows, int NTokens>
void panel_tile(const typename Kind::Elem* panel, const uint8_t* rows, int r0, int t0, int v0,
                const typename Kind::Elem* packed, const typename Kind::Elem* x, float* partials, float* y,
                PanelPrefetch& next) {
  constexpr int kVectors = Kind::template kVectors<Cols>, kBlock = kBlockVectors<Kind>;
  constexpr int64_t kRowBytes = float_row_stride(T, Cols);
  const bool first = v0 == 0, last = v0 + kBlock >= kVectors;
  const int vectors = std::min(v0 + kBlock, kVectors) - v0;
  float* saved = partials + int64_t{t0} * NRows * kFloatLanes;

  typename Kind::Acc acc[NRows][NTokens];
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t)
      acc[r][t] = first ? Kind::zero() : Kind::load_acc(saved + (t * NRows + r) * kFloatLanes);
  panel_products<Kind>(panel, packed + (int64_t{t0} * kVectors + int64_t{v0} * NTokens) * Kind::kElems, vectors, acc,
                        next);
  if (!last) {
    for (int r = 0; r < NRows; ++r)
      for (int t = 0; t < NTokens; ++t) Kind::store_acc(acc[r][t], saved + (t * NRows + r) * kFloatLanes);
    return;
  }
  float sums[NRows][NTokens];
  Kind::template finish<T, Cols, NRows, NTokens, kRowBytes>(acc, rows, x + int64_t{t0} * Cols, sums);
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t) {
      float& dst = y[int64_t{t0 + t} * Rows + r0 + r];
      dst = S == Store::Add ? dst + sums[r][t] : sums[r][t];
    }
}

// Rows r0 .. r0 + NRows - 1 for a chunk's n_tokens tokens (at most Chunk).
// While a k-block's token tiles run, the weights of the next panel (the
// next k-block, or the next row tile's first) are asked for.
template <class Kind, TensorType T, int Rows, int Cols, Store S, int NRows, int TokenTile, int Chunk>
void matmul_panel_rows(const uint8_t* w, int r0, const typename Kind::Elem* packed, const typename Kind::Elem* x,
                       float* y, int n_tokens) {
  using Elem = typename Kind::Elem;
  constexpr int kVectors = Kind::template kVectors<Cols>, kBlock = kBlockVectors<Kind>, kElems = Kind::kElems;
  constexpr int64_t kRowBytes = float_row_stride(T, Cols);
  const uint8_t* rows = w + r0 * kRowBytes;
  Elem* panel = thread_buffer<Panel, Elem, int64_t{NRows} * kBlock * kElems>();
  float* partials = thread_buffer<PanelPartials, float, int64_t{Chunk} * NRows * kFloatLanes>();
  const int tiles = n_tokens / TokenTile + n_tokens % TokenTile;
  // At least one block: with fewer values than a vector, it only ends the sums.
  for (int v0 = 0; v0 == 0 || v0 < kVectors; v0 += kBlock) {
    for (int r = 0; r < NRows; ++r)
      for (int v = v0; v < std::min(v0 + kBlock, kVectors); ++v)
        Kind::template fill<T, Cols>(rows + r * kRowBytes, v, panel + (r * kBlock + v - v0) * kElems);
    const bool last_block = v0 + kBlock >= kVectors;
    const uint8_t* next = last_block ? rows + NRows * kRowBytes : rows + row_bytes(T, int64_t{v0 + kBlock} * kElems);
    const int64_t next_bytes = last_block ? (r0 + 2 * NRows <= Rows ? panel_source_bytes<Kind, T, Cols>(0) : 0)
                                          : panel_source_bytes<Kind, T, Cols>(v0 + kBlock);
    PanelPrefetch prefetch(next, kRowBytes, next_bytes, NRows, tiles);
    int t0 = 0;
    for (; t0 + TokenTile <= n_tokens; t0 += TokenTile)
      panel_tile<Kind, T, Rows, Cols, S, NRows, TokenTile>(panel, rows, r0, t0, v0, packed, x, partials, y, prefetch);
    for (; t0 < n_tokens; ++t0)
      panel_tile<Kind, T, Rows, Cols, S, NRows, 1>(panel, rows, r0, t0, v0, packed, x, partials, y, prefetch);
  }
}

// The rows of row tile `tile` (the last one may be partial) for a chunk's
// tokens: packed by pack_tokens<Kind, Cols, TokenTile, Chunk>, x as they came.
template <class Kind, TensorType T, int Rows, int Cols, Store S, int RowTile, int TokenTile, int Chunk>
void matmul_panel_row_tile(const uint8_t* w, int tile, const typename Kind::Elem* packed,
                           const typename Kind::Elem* x, float* y, int n_tokens) {
  const int r0 = tile * RowTile;
  if (r0 + RowTile <= Rows) {
    matmul_panel_rows<Kind, T, Rows, Cols, S, RowTile, TokenTile, Chunk>(w, r0, packed, x, y, n_tokens);
  } else {
    for (int r = r0; r < Rows; ++r)
      matmul_panel_rows<Kind, T, Rows, Cols, S, 1, TokenTile, Chunk>(w, r, packed, x, y, n_tokens);
  }
}

}  // namespace kiln::kernels::detail
