// Q4_K, Q5_K and Q6_K matrices rearranged at load time into the order the
// integer K-quant matmul (dot_kquant.hpp) reads them. As for Q8_0 and Q4_0
// (interleave.hpp), each group of kInterleaveRows rows becomes one contiguous
// stream, and one vector holds 4 bytes of every row of the group, so that
// each 32-bit lane of a result belongs to one row.
//
// For each super-block (256 columns), the group holds a header and then 8
// units of 32 columns (one Q8 activation block each):
//
//   header, Q4_K and Q5_K: the rows' fp16 d, the rows' fp16 dmin, then for
//     each sub-block s (0..7) the rows' 6-bit scales, one byte per row, then
//     for each s the rows' mins. Q6_K: the rows' fp16 d, then for each
//     sub-block of 16 columns (0..15) the rows' int8 scales. GGUF packs the
//     Q4_K/Q5_K scales into 12 bytes; unpacked here once, a sub-block's scales
//     are one load away (4 bytes more per row and super-block).
//   unit: 4 vectors of nibbles, as Q4_0 stores a block (byte j of a row
//     holds the low 4 bits of the unit's elements j and j + 16; vector v
//     holds bytes 4v .. 4v + 3 of each row), then the codes' high bits:
//     Q5_K: 1 vector; byte k of a row's 4 has at bit v the fifth bit of
//       element 4v + k and at bit 4 + v that of element 16 + 4v + k (v < 4);
//     Q6_K: 2 vectors, for elements 0..15 then 16..31; byte k of a row's 4
//       has at bits 2v, 2v + 1 the top 2 bits of element 4v + k (+ 16).
//     So one shift and one mask put a vector's high bits above the nibbles
//     they belong to (kernels/arch/int8_*.hpp, decode_k).
//
// Codes are the GGUF's unsigned ones (Q6_K's still offset by 32). The layout
// is a pure function of the GGUF bytes and kInterleaveRows; the bytes per
// row are those of the GGUF matrix (Q6_K) or 4 more per super-block, plus the
// zero rows that pad a last, partial group.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"
#include "kernels/quant_k.hpp"

namespace kiln::kernels {

constexpr bool is_k_quant(TensorType t) {
  return t == TensorType::Q4_K || t == TensorType::Q5_K || t == TensorType::Q6_K;
}

inline constexpr int kUnitsPerSuperBlock = kSuperBlockElems / kQuantBlockElems;

// Bytes of one row's header and of one row's unit.
constexpr int64_t k_header_row_bytes(TensorType t) { return t == TensorType::Q6_K ? 2 + 16 : 2 + 2 + 8 + 8; }
constexpr int64_t k_unit_row_bytes(TensorType t) {
  return 16 + (t == TensorType::Q4_K ? 0 : t == TensorType::Q5_K ? 4 : 8);
}

constexpr int64_t k_super_block_group_bytes(TensorType t) {
  return (k_header_row_bytes(t) + kUnitsPerSuperBlock * k_unit_row_bytes(t)) * kInterleaveRows;
}

constexpr int64_t k_interleaved_group_bytes(TensorType t, int64_t cols) {
  return cols / kSuperBlockElems * k_super_block_group_bytes(t);
}

// Writes the group of kInterleaveRows rows from first_row on of the GGUF
// matrix `gguf` (rows x cols) to `group` (a last, partial group is padded
// with zero rows). interleave_matrix (interleave.hpp) calls it per group.
void interleave_k_group(TensorType t, const uint8_t* gguf, uint8_t* group, int64_t first_row, int64_t rows,
                        int64_t cols);

}  // namespace kiln::kernels
