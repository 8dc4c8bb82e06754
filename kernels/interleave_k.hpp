// The super-block types (the K-quants Q2_K .. Q6_K, and IQ4_XS, which shares
// their 256-element super-blocks) rearranged at load time into the order the
// integer matmul (dot_kquant.hpp) reads them. As for the 32-element block
// types (interleave.hpp), each group of kInterleaveRows rows becomes one
// contiguous stream, and one vector holds 4 bytes of every row of the group,
// so that each 32-bit lane of a result belongs to one row.
//
// For each super-block (256 columns), the group holds a header and then 8
// units of 32 columns (one Q8 activation block each). Each header field is
// stored for all rows of the group, one after the other:
//
//   header, Q4_K and Q5_K: the fp16 d, the fp16 dmin, then for each
//     sub-block s (0..7) the 6-bit scale, one byte per row, then for each s
//     the min. Q6_K and Q3_K: the fp16 d, then for each sub-block of 16
//     columns (0..15) the int8 scale (Q3_K's less its offset of 32). IQ4_XS:
//     the fp16 d, then for each sub-block (0..7) the int8 scale less 32.
//     Q2_K: the fp16 d, the fp16 dmin, then for each sub-block of 16 columns
//     the GGUF's byte of scale (low nibble) and min (high nibble). Scales
//     that GGUF packs in 6 bits are unpacked here once, so that a
//     sub-block's scales are one load away.
//   unit, in the parts of interleave_unit.hpp: Q4_K and IQ4_XS the nibbles
//     of the codes; Q5_K the nibbles then a bit vector of the fifth bits;
//     Q6_K the nibbles then crumb vectors of the top 2 bits; Q2_K the crumbs;
//     Q3_K the crumbs of the low 2 bits, then a bit vector of the third.
//     The codes are the GGUF's unsigned ones (Q6_K's still offset by 32,
//     Q3_K's by 4; IQ4_XS's index its codebook).
//
// The layout is a pure function of the GGUF bytes and kInterleaveRows; the
// bytes per row are those of the GGUF matrix (Q6_K, Q2_K) or 2 (IQ4_XS) or
// 4 (Q4_K, Q5_K, Q3_K) more per super-block, plus the zero rows that pad a
// last, partial group.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"
#include "kernels/quant_k.hpp"

namespace kiln::kernels {

constexpr bool is_super_block_type(TensorType t) {
  return t == TensorType::Q2_K || t == TensorType::Q3_K || t == TensorType::Q4_K || t == TensorType::Q5_K ||
         t == TensorType::Q6_K || t == TensorType::IQ4_XS;
}

inline constexpr int kUnitsPerSuperBlock = kSuperBlockElems / kQuantBlockElems;

// Bytes of one row's header and of one row's unit.
constexpr int64_t k_header_row_bytes(TensorType t) {
  switch (t) {
    case TensorType::Q6_K:
    case TensorType::Q3_K: return 2 + 16;
    case TensorType::IQ4_XS: return 2 + 8;
    default: return 2 + 2 + 16;  // Q4_K and Q5_K: 8 scales and 8 mins; Q2_K: 16 packed
  }
}
constexpr int64_t k_unit_row_bytes(TensorType t) {
  switch (t) {
    case TensorType::Q2_K: return 8;
    case TensorType::Q3_K: return 8 + 4;
    case TensorType::Q5_K: return 16 + 4;
    case TensorType::Q6_K: return 16 + 8;
    default: return 16;  // Q4_K, IQ4_XS
  }
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
