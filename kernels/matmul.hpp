// Weight matrix times activations, and embedding lookup.
#pragma once

#include <cstdint>

#include "kernels/dot.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels {

namespace detail {

// Tile shape: 4 rows x 2 tokens keeps 8 accumulators, 4 weight vectors and an
// activation vector in the 16 AVX registers. Each weight vector is loaded (and
// decoded) once per pair of tokens; several rows give a lone token
// independent FMA chains.
inline constexpr int kMatmulRowTile = 4;
inline constexpr int kMatmulTokenTile = 2;

// y for rows r0 .. r0 + NRows - 1 and tokens t0 .. t0 + NTokens - 1.
template <TensorType T, int Rows, int Cols, int NRows, int NTokens>
void matmul_tile(const uint8_t* w, int r0, int t0, const float* x, float* y) {
  constexpr auto kRowBytes = static_cast<int64_t>(row_bytes(T, Cols));
  float out[NRows][NTokens];
  dot_tile<T, Cols, NRows, NTokens>(w + r0 * kRowBytes, x + static_cast<int64_t>(t0) * Cols, out);
  for (int r = 0; r < NRows; ++r)
    for (int t = 0; t < NTokens; ++t) y[static_cast<int64_t>(t0 + t) * Rows + r0 + r] = out[r][t];
}

// y for rows r0 .. r0 + NRows - 1 and every token.
template <TensorType T, int Rows, int Cols, int NRows>
void matmul_rows(const uint8_t* w, int r0, const float* x, float* y, int n_tokens) {
  int t0 = 0;
  for (; t0 + kMatmulTokenTile <= n_tokens; t0 += kMatmulTokenTile)
    matmul_tile<T, Rows, Cols, NRows, kMatmulTokenTile>(w, r0, t0, x, y);
  for (; t0 < n_tokens; ++t0) matmul_tile<T, Rows, Cols, NRows, 1>(w, r0, t0, x, y);
}

}  // namespace detail

// y[t][r] = sum_k W[r][k] * x[t][k] for t < n_tokens; W is Rows rows of Cols
// elements of type T in GGUF layout, x is [n_tokens][Cols], y [n_tokens][Rows].
// Call from all threads of a parallel region (or from serial code): the rows
// are shared out among them.
template <TensorType T, int Rows, int Cols>
void matmul(const void* w, const float* x, float* y, int n_tokens) {
  static_assert(Rows > 0 && Cols > 0 && Cols % traits_of(T).block_elems == 0);
  constexpr int kRowTile = detail::kMatmulRowTile;
  constexpr int kTiles = (Rows + kRowTile - 1) / kRowTile;
  const auto* rows = static_cast<const uint8_t*>(w);

#pragma omp for schedule(static)
  for (int tile = 0; tile < kTiles; ++tile) {
    const int r0 = tile * kRowTile;
    if (r0 + kRowTile <= Rows) {
      detail::matmul_rows<T, Rows, Cols, kRowTile>(rows, r0, x, y, n_tokens);
    } else {  // the last, partial tile
      for (int r = r0; r < Rows; ++r) detail::matmul_rows<T, Rows, Cols, 1>(rows, r, x, y, n_tokens);
    }
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
