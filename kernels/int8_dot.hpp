// The integer core of the quantized matmul: one block (32 values) of the
// kInterleaveRows interleaved weight rows (interleave.hpp) times one block of activations
// rounded to Q8 (q8_activations.hpp), one result per row.
//
// Numerics: a row's block product is an exact integer (at most
// 32 * 127 * 127 in magnitude, so exact in float too). It is scaled by
// d_weight * d_activation (one float product) and accumulated in float,
// acc = fma(float(dot), scale, acc), block after block in order. Integer sums
// are exact whatever their grouping, so every implementation computes the
// same bits: each instruction set's (kernels/arch/int8_*.hpp) is checked
// against the portable one wherever it is compiled.
//
// Weights stored as unsigned codes with a bias (value = code - bias: Q4_0's
// nibble - 8, Q5_0's code - 16, Q6_K's - 32, Q3_K's - 4) may be multiplied
// as the unsigned codes, and bias * (the activations' sum) subtracted: the
// same integer. Signed weights (Q8_0's, and the codebook types' values: IQ4's,
// MXFP4's doubled E2M1) may be multiplied as they are or with a bias of 128
// the same way; each instruction set picks, and one that multiplies them as
// they are ignores the offset.
//
// An implementation is a struct of static functions over its own types, for
// kRows interleaved rows: Quants (one block of the rows, decoded once and
// reused for every token), Rows (an int32 per row) and Acc (a float per row).
// decode<T> decodes a block of a 32-element block type and dot<T> gives its
// products with the bias's offset passed in. For the super-block types
// (dot_kquant.hpp) it also decodes a unit of 32 codes (decode_k), multiplies
// unsigned codes over half or all of a block (dot_codes), and has the few
// float operations their scales need (byte_scales, nibble_scales, mul,
// fnma), each a single IEEE operation per lane.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

// The bias of a type's codes (0 for the types with a min instead, Q5_1,
// Q2_K, Q4_K, Q5_K), or of signed weights made unsigned.
constexpr int32_t code_bias(TensorType t) {
  switch (t) {
    case TensorType::Q4_0: return 8;
    case TensorType::Q5_0: return 16;
    case TensorType::Q3_K: return 4;
    case TensorType::Q6_K: return 32;
    case TensorType::Q8_0:
    case TensorType::IQ4_NL:
    case TensorType::IQ4_XS:
    case TensorType::MXFP4: return 128;
    default: return 0;
  }
}

}  // namespace kiln::kernels
