// Quantized matrices rearranged at load time into the order the integer
// matmul reads them; this file covers the types of 32-element blocks (Q8_0,
// Q4_0, Q5_0, Q5_1, IQ4_NL, MXFP4) and the sizes of every interleaved type.
//
// GGUF stores a quantized matrix row after row. The matmul (dot_q8.hpp)
// multiplies kInterleaveRows rows at once (8 with AVX2 or NEON, 16 with
// AVX-512: as many as one register holds 32-bit lanes, kernels/arch/int8.hpp),
// one register holding 4 bytes of each of them, so that each 32-bit lane of
// the result belongs to one row and no horizontal sums are needed. Each group
// of kInterleaveRows rows becomes one contiguous stretch of memory, read
// front to back as a single stream, in spans of span_blocks(t) blocks (as
// many as one cache line holds the rows' scales of):
//
//   scales: for each block b of the span, the rows' fp16 scales d
//           (2 * kInterleaveRows bytes), for Q5_1 followed by the rows' fp16
//           mins m, for MXFP4 the rows' E8M0 bytes e (kInterleaveRows
//           bytes): one cache line;
//   quants: for each block b of the span, vectors of 4 * kInterleaveRows
//           bytes (interleave_unit.hpp): Q8_0 has 8, vector v holding bytes
//           4v .. 4v + 3 of each row's 32 signed values; Q4_0, IQ4_NL, MXFP4 the
//           4 vectors of nibbles (the GGUF's bytes as they are); Q5_0 and
//           Q5_1 the 4 vectors of their codes' low 4 bits, then a vector of
//           bits holding the fifth.
//
// A last span with fewer blocks keeps a whole line for its scales.
// A last group with fewer rows is padded with zero rows. The layout takes the
// bytes of the GGUF matrix plus less than a cache line of padding per group
// (and the zero rows of the last group). It depends on the instruction set the
// build targets, like the code that reads it.
//
// The K-quants and IQ4_XS have a layout of their own in the same spirit
// (interleave_k.hpp); the functions below cover every interleaved type.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"
#include "kernels/cache_line.hpp"
#include "kernels/float_columns.hpp"
#include "kernels/float_rows.hpp"
#include "kernels/interleave_k.hpp"
#include "kernels/interleave_unit.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels {

// The types of 32-element blocks stored interleaved for the matmul.
constexpr bool is_block_interleaved(TensorType t) {
  return t == TensorType::Q8_0 || t == TensorType::Q4_0 || t == TensorType::Q5_0 || t == TensorType::Q5_1 ||
         t == TensorType::IQ4_NL || t == TensorType::MXFP4;
}

// The weight types stored interleaved for the matmul.
constexpr bool is_interleaved(TensorType t) { return is_block_interleaved(t) || is_super_block_type(t); }

// Bytes of one row's scale in one block: an fp16 d, or MXFP4's exponent byte.
constexpr int64_t block_scale_field_bytes(TensorType t) { return t == TensorType::MXFP4 ? 1 : 2; }

// Bytes of one row's scales in one block: d, and Q5_1's m.
constexpr int64_t block_scale_bytes(TensorType t) {
  return t == TensorType::Q5_1 ? 2 * block_scale_field_bytes(t) : block_scale_field_bytes(t);
}

// Bytes of one row's quants in one block (the block without its scales).
constexpr int64_t block_quant_bytes(TensorType t) { return traits_of(t).block_bytes - block_scale_bytes(t); }

// Blocks per span of a group: the rows' scales of a span fill one cache line.
constexpr int64_t span_blocks(TensorType t) { return kCacheLineBytes / (kInterleaveRows * block_scale_bytes(t)); }

// Bytes of a whole span: its line of scales, then its blocks' quants.
constexpr int64_t span_bytes(TensorType t) {
  return kCacheLineBytes + span_blocks(t) * kInterleaveRows * block_quant_bytes(t);
}

// Where the span holding block b starts in a group.
constexpr int64_t span_offset(TensorType t, int64_t b) { return b / span_blocks(t) * span_bytes(t); }

// Where block b's scales and quants start in a group.
constexpr int64_t block_scales_offset(TensorType t, int64_t b) {
  return span_offset(t, b) + b % span_blocks(t) * kInterleaveRows * block_scale_bytes(t);
}
constexpr int64_t block_quants_offset(TensorType t, int64_t b) {
  return span_offset(t, b) + kCacheLineBytes + b % span_blocks(t) * kInterleaveRows * block_quant_bytes(t);
}

// A group's scale bytes: one line per span.
constexpr int64_t interleaved_scales_bytes(TensorType t, int64_t cols) {
  const int64_t blocks = cols / kQuantBlockElems;
  return (blocks + span_blocks(t) - 1) / span_blocks(t) * kCacheLineBytes;
}

constexpr int64_t interleaved_group_bytes(TensorType t, int64_t cols) {
  if (is_super_block_type(t)) return k_interleaved_group_bytes(t, cols);
  return interleaved_scales_bytes(t, cols) + cols / kQuantBlockElems * kInterleaveRows * block_quant_bytes(t);
}

constexpr int64_t interleaved_groups(int64_t rows) { return (rows + kInterleaveRows - 1) / kInterleaveRows; }

constexpr int64_t interleaved_bytes(TensorType t, int64_t rows, int64_t cols) {
  return interleaved_groups(rows) * interleaved_group_bytes(t, cols);
}

// Writes the rows x cols matrix `gguf` (GGUF layout, type t) into `out`
// (interleaved_bytes(t, rows, cols) bytes). Work-shared over groups when
// called inside a parallel region.
void interleave_matrix(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols);

// Whether the matmul reads a matrix of type t with rows of `cols` values in
// a layout of its own (interleaved, F32 column panels: float_columns.hpp, or
// padded float rows: float_rows.hpp) instead of the GGUF's rows.
constexpr bool is_repacked(TensorType t, int64_t cols) {
  return is_interleaved(t) || in_float_columns(t, cols) || has_padded_rows(t, cols);
}

// Bytes of one rows x cols matrix as the matmul reads it: repacked, or the
// GGUF's rows as they are. A tensor that stacks several matrices (a
// mixture's experts) holds them back to back, each repacked on its own.
constexpr int64_t matmul_matrix_bytes(TensorType t, int64_t rows, int64_t cols) {
  if (is_interleaved(t)) return interleaved_bytes(t, rows, cols);
  if (in_float_columns(t, cols)) return float_columns_bytes(rows, cols);
  return rows * float_row_stride(t, cols);
}

// Writes the rows x cols matrix `gguf` (GGUF layout, type t, is_repacked)
// into `out` (matmul_matrix_bytes) in the layout the matmul reads.
// Work-shared when called inside a parallel region.
void pack_matrix(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols);

}  // namespace kiln::kernels
