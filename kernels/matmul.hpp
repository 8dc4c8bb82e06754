// Weight matrix times activations, and embedding lookup.
#pragma once

#include <cstdint>

#include "kernels/dot.hpp"
#include "kernels/dot_q8.hpp"
#include "kernels/quant.hpp"
#include "kernels/sync.hpp"

namespace kiln::kernels {

// The activations a matmul multiplies, in the forms weight types read:
// floats for float weights, Q8-rounded for Q8_0 and Q4_0 (reads_q8). Both
// are [n_tokens][Cols]; only the form the weight type reads must be filled.
struct MatmulInput {
  const float* f;
  Q8In q8;
};

// y = W x, or y += W x (a residual connection, added in place).
enum class Store { Replace, Add };

namespace detail {

// Tile shape (rows x tokens): each weight vector is loaded (and decoded) once
// per tile of tokens, and several rows give a lone token independent chains.
// Float weights: 4 x 3 keeps 12 accumulators, 4 weight vectors and an
// activation vector in the 16 AVX registers. Integer dot products keep the
// intermediates in registers, but decoding a block costs more, so it is worth
// sharing among 4 tokens (measured best on AVX2, 48 tokens of a 5632 x 2048
// matrix).
inline constexpr int kMatmulRowTile = 4;
constexpr int matmul_token_tile(TensorType t) { return reads_q8(t) ? 4 : 3; }

// y for rows r0 .. r0 + NRows - 1 and tokens t0 .. t0 + NTokens - 1.
template <TensorType T, int Rows, int Cols, Store S, int NRows, int NTokens>
void matmul_tile(const uint8_t* w, int r0, int t0, const MatmulInput& x, float* y) {
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
  const uint8_t* rows = w + r0 * kRowBytes;
  const int64_t x_at = static_cast<int64_t>(t0) * Cols;
  float out[NRows][NTokens];
  if constexpr (reads_q8(T)) {
    const Q8In q8{x.q8.qs + x_at, x.q8.d + x_at / kQuantBlockElems};
    dot_tile_q8<NativeInt8Ops, T, Cols, NRows, NTokens>(rows, q8, out);
  } else {
    dot_tile<T, Cols, NRows, NTokens>(rows, x.f + x_at, out);
  }
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t) {
      float& dst = y[static_cast<int64_t>(t0 + t) * Rows + r0 + r];
      dst = S == Store::Add ? dst + out[r][t] : out[r][t];
    }
}

// y for rows r0 .. r0 + NRows - 1 and every token.
template <TensorType T, int Rows, int Cols, Store S, int NRows>
void matmul_rows(const uint8_t* w, int r0, const MatmulInput& x, float* y, int n_tokens) {
  constexpr int kTokenTile = matmul_token_tile(T);
  int t0 = 0;
  for (; t0 + kTokenTile <= n_tokens; t0 += kTokenTile)
    matmul_tile<T, Rows, Cols, S, NRows, kTokenTile>(w, r0, t0, x, y);
  for (; t0 < n_tokens; ++t0) matmul_tile<T, Rows, Cols, S, NRows, 1>(w, r0, t0, x, y);
}

// The rows of one row tile (the last one may be partial) for every token.
template <TensorType T, int Rows, int Cols, Store S>
void matmul_row_tile(const uint8_t* w, int tile, const MatmulInput& x, float* y, int n_tokens) {
  const int r0 = tile * kMatmulRowTile;
  if (r0 + kMatmulRowTile <= Rows) {
    matmul_rows<T, Rows, Cols, S, kMatmulRowTile>(w, r0, x, y, n_tokens);
  } else {
    for (int r = r0; r < Rows; ++r) matmul_rows<T, Rows, Cols, S, 1>(w, r, x, y, n_tokens);
  }
}

}  // namespace detail

// y[t][r] = sum_k W[r][k] * x[t][k] for t < n_tokens (or y[t][r] += that);
// W is Rows rows of Cols elements of type T in GGUF layout, x is
// [n_tokens][Cols], y [n_tokens][Rows]. Call from all threads of a parallel
// region (or from serial code): the rows are shared out among them.
template <TensorType T, int Rows, int Cols, Store S = Store::Replace, Sync Y = Sync::Barrier>
void matmul(const void* w, const MatmulInput& x, float* y, int n_tokens) {
  static_assert(Rows > 0 && Cols > 0 && Cols % traits_of(T).block_elems == 0);
  constexpr int kTiles = (Rows + detail::kMatmulRowTile - 1) / detail::kMatmulRowTile;
  const auto* rows = static_cast<const uint8_t*>(w);

  if constexpr (Y == Sync::Barrier) {
#pragma omp for schedule(static)
    for (int tile = 0; tile < kTiles; ++tile) detail::matmul_row_tile<T, Rows, Cols, S>(rows, tile, x, y, n_tokens);
  } else {
#pragma omp for schedule(static) nowait
    for (int tile = 0; tile < kTiles; ++tile) detail::matmul_row_tile<T, Rows, Cols, S>(rows, tile, x, y, n_tokens);
  }
}

// out[t] = row ids[t] of W (Cols elements of type T per row), as floats.
template <TensorType T, int Cols>
void get_rows(const void* w, const int32_t* ids, int n_tokens, float* out) {
  const auto* rows = static_cast<const uint8_t*>(w);
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
#pragma omp for schedule(static)
  for (int t = 0; t < n_tokens; ++t)
    dequantize_row(T, rows + ids[t] * kRowBytes, out + static_cast<int64_t>(t) * Cols, Cols);
}

}  // namespace kiln::kernels
