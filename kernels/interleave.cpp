#include "kernels/interleave.hpp"

#include <cstring>

#include "kernels/team.hpp"

namespace kiln::kernels {

namespace {

template <class Block>
Block read_block(const uint8_t* bytes) {
  Block b;
  std::memcpy(&b, bytes, sizeof b);
  return b;
}

// Row r's quants of one Q5_0 / Q5_1 block: nibbles, then the fifth bits.
template <class Block>
void write_q5_quants(const uint8_t* block, int64_t r, uint8_t* quants) {
  const auto b = read_block<Block>(block);
  for (int e = 0; e < kQuantBlockElems; ++e) {
    const int code = q5_code(b, e);
    unit::put_nibble(quants, r, e, code & 0x0f);
    unit::put_bit(quants + 4 * kInterleavedVectorBytes, r, e, code >> 4);
  }
}

// One group of a matrix of 32-element blocks, rows from first_row on
// (interleave_k.cpp does the same for the super-block types).
void interleave_block_group(TensorType t, const uint8_t* gguf, uint8_t* group, int64_t first_row, int64_t rows,
                            int64_t cols) {
  const int64_t n_blocks = cols / kQuantBlockElems;
  const int64_t block_bytes = traits_of(t).block_bytes;
  const int64_t scale_bytes = block_scale_bytes(t);
  const int64_t quant_bytes = block_quant_bytes(t);
  std::memset(group, 0, static_cast<size_t>(interleaved_group_bytes(t, cols)));
  for (int r = 0; r < kInterleaveRows && first_row + r < rows; ++r) {
    const uint8_t* row = gguf + (first_row + r) * n_blocks * block_bytes;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block = row + b * block_bytes;
      uint8_t* scales = group + block_scales_offset(t, b);
      const int64_t field = block_scale_field_bytes(t);
      std::memcpy(scales + r * field, block, static_cast<size_t>(field));  // the scale d (MXFP4: e)
      if (t == TensorType::Q5_1) std::memcpy(scales + kInterleaveRows * 2 + r * 2, block + 2, 2);  // the fp16 min m
      uint8_t* block_quants = group + block_quants_offset(t, b);
      if (t == TensorType::Q5_0) {
        write_q5_quants<BlockQ5_0>(block, r, block_quants);
      } else if (t == TensorType::Q5_1) {
        write_q5_quants<BlockQ5_1>(block, r, block_quants);
      } else {
        for (int64_t v = 0; v < quant_bytes / 4; ++v)
          std::memcpy(block_quants + v * kInterleavedVectorBytes + r * 4, block + scale_bytes + v * 4, 4);
      }
    }
  }
}

}  // namespace

void interleave_matrix(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols) {
  const auto* src = static_cast<const uint8_t*>(gguf);
  auto* dst = static_cast<uint8_t*>(out);
  const auto write_group = is_super_block_type(t) ? interleave_k_group : interleave_block_group;
#pragma omp for schedule(static) nowait
  for (int64_t g = 0; g < interleaved_groups(rows); ++g)
    write_group(t, src, dst + g * interleaved_group_bytes(t, cols), g * kInterleaveRows, rows, cols);
  team_barrier();
}

void pack_matrix(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols) {
  if (in_float_columns(t, cols))
    pack_float_columns(static_cast<const float*>(gguf), static_cast<float*>(out), rows, cols);
  else if (has_padded_rows(t, cols))
    pad_float_rows(t, gguf, out, rows, cols);
  else
    interleave_matrix(t, gguf, out, rows, cols);
}

}  // namespace kiln::kernels
