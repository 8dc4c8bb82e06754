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
// Q4_0 weights (nibble - 8) are multiplied as the unsigned nibbles, and
// 8 * (the activation block's sum) is subtracted: the same integer.
//
// An implementation is a struct of static functions over its own types, for
// kRows interleaved rows: Quants (one block of the rows, decoded once and
// reused for every token), Rows (an int32 per row) and Acc (a float per row).
// For the K-quants (dot_kquant.hpp) it also decodes a unit of 32 codes
// (decode_k), multiplies unsigned codes over half or all of a block
// (dot_codes), and has the few float operations their scales need
// (byte_scales, mul, fnma), each a single IEEE operation per lane.
#pragma once

#include "kernels/arch/int8.hpp"
