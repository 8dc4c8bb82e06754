// The reference forward pass's own decoding of GGUF weights: plain scalar
// code written from the block layouts of the GGUF format (ggml's types), with
// nothing taken from kernels/. Tests hold kiln's dequantizers and get_rows
// against it, and the reference forward pass multiplies what it returns.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gguf/gguf.hpp"

namespace kiln::test {

// Every element of `t` as float, in storage order. Throws kiln::Error for a
// type the reference does not decode.
std::vector<float> reference_dequantize(const GgufTensor& t);

// The same for `n` elements of GGUF type id `ggml_type` at `data`.
std::vector<float> reference_dequantize(uint32_t ggml_type, const uint8_t* data, int64_t n);

// The distance between neighbouring representable values around element i of
// a Q4_K, Q5_K or Q6_K tensor: d times its sub-block's scale.
double reference_k_quant_step(const GgufTensor& t, int64_t i);

// IEEE half precision: its value, and a float rounded to the nearest one (ties to even).
float half_to_float(uint16_t h);
float round_to_half(float x);

}  // namespace kiln::test
