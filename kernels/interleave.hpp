// Q8_0 and Q4_0 matrices rearranged at load time into the order the integer
// matmul reads them.
//
// GGUF stores a quantized matrix row after row. The matmul (dot_q8.hpp)
// multiplies kInterleaveRows rows at once (8 with AVX2 or NEON, 16 with
// AVX-512: as many as one register holds 32-bit lanes, kernels/arch/int8.hpp),
// one register holding 4 bytes of each of them, so that each 32-bit lane of
// the result belongs to one row and no horizontal sums are needed. Each group
// of kInterleaveRows rows becomes one contiguous stretch of memory (read
// front to back, a single stream for the prefetcher):
//
//   scales: for each block b, the rows' fp16 scales (2 * kInterleaveRows
//           bytes), padded to a cache line at the end;
//   quants: for each block b, vectors of 4 * kInterleaveRows bytes; vector v
//           holds bytes 4v .. 4v + 3 of row 0's quants in block b, then the
//           same bytes of rows 1, 2, ... Q8_0 has 8 vectors per block
//           (elements 4v .. 4v + 3); Q4_0 has 4 (byte j packs elements j and
//           j + 16 as low and high nibble, so vector v holds elements
//           4v .. 4v + 3 and 16 + 4v ..).
//
// A last group with fewer rows is padded with zero rows. The layout takes the
// bytes of the GGUF matrix plus at most 64 bytes of padding per group (and
// the zero rows of the last group). It depends on the instruction set the
// build targets, like the code that reads it.
//
// Q4_K, Q5_K and Q6_K have a layout of their own in the same spirit
// (interleave_k.hpp); the functions below cover every interleaved type.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"
#include "kernels/interleave_k.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels {

// The weight types stored interleaved for the matmul.
constexpr bool is_interleaved(TensorType t) {
  return t == TensorType::Q8_0 || t == TensorType::Q4_0 || is_k_quant(t);
}

// Bytes of one row's quants in one block (the block without its fp16 scale).
constexpr int64_t block_quant_bytes(TensorType t) { return traits_of(t).block_bytes - 2; }

// Bytes of one vector of a block: 4 of each row.
inline constexpr int64_t kInterleavedVectorBytes = 4 * kInterleaveRows;

constexpr int64_t interleaved_scales_bytes(int64_t cols) {
  const int64_t bytes = cols / kQuantBlockElems * kInterleaveRows * 2;
  return (bytes + 63) / 64 * 64;
}

constexpr int64_t interleaved_group_bytes(TensorType t, int64_t cols) {
  if (is_k_quant(t)) return k_interleaved_group_bytes(t, cols);
  return interleaved_scales_bytes(cols) + cols / kQuantBlockElems * kInterleaveRows * block_quant_bytes(t);
}

constexpr int64_t interleaved_groups(int64_t rows) { return (rows + kInterleaveRows - 1) / kInterleaveRows; }

constexpr int64_t interleaved_bytes(TensorType t, int64_t rows, int64_t cols) {
  return interleaved_groups(rows) * interleaved_group_bytes(t, cols);
}

// Writes the rows x cols matrix `gguf` (GGUF layout, type t) into `out`
// (interleaved_bytes(t, rows, cols) bytes). Work-shared over groups when
// called inside a parallel region.
void interleave_matrix(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols);

}  // namespace kiln::kernels
