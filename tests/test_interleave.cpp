// The interleaved layout of Q8_0 / Q4_0 matrices (kernels/interleave.hpp):
// where each row's scale and quant bytes land, the zero padding of a last,
// partial group of rows, and the sizes.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/interleave.hpp"
#include "tests/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

void check_layout(TensorType t, int rows, int cols) {
  CAPTURE(traits_of(t).name);
  CAPTURE(rows);
  CAPTURE(cols);
  const std::vector<uint8_t> gguf = random_weights(t, rows, cols, rows + cols);
  std::vector<uint8_t> out(static_cast<size_t>(interleaved_bytes(t, rows, cols)), 0xAB);
  interleave_matrix(t, gguf.data(), out.data(), rows, cols);

  const int64_t n_blocks = cols / kQuantBlockElems;
  const int64_t block_bytes = traits_of(t).block_bytes;
  const int64_t quant_bytes = block_quant_bytes(t);
  for (int64_t g = 0; g < interleaved_groups(rows); ++g) {
    const uint8_t* group = out.data() + g * interleaved_group_bytes(t, cols);
    const uint8_t* quants = group + interleaved_scales_bytes(cols);
    for (int r = 0; r < kInterleaveRows; ++r) {
      const int64_t row = g * kInterleaveRows + r;
      for (int64_t b = 0; b < n_blocks; ++b) {
        // A missing row of the last group reads as zeros: scale 0, quants 0.
        std::vector<uint8_t> block(static_cast<size_t>(block_bytes), 0);
        if (row < rows) std::memcpy(block.data(), gguf.data() + (row * n_blocks + b) * block_bytes, block.size());
        CHECK(std::memcmp(group + (b * kInterleaveRows + r) * 2, block.data(), 2) == 0);
        for (int64_t j = 0; j < quant_bytes; ++j) {
          const uint8_t at = quants[b * kInterleaveRows * quant_bytes + (j / 4) * kInterleavedVectorBytes + r * 4 + j % 4];
          if (at != block[2 + j]) FAIL_CHECK("row " << row << " block " << b << " byte " << j);
        }
      }
    }
  }
}

TEST_CASE("interleave: every byte in its place") {
  for (TensorType t : {TensorType::Q8_0, TensorType::Q4_0}) {
    check_layout(t, kInterleaveRows, 32);
    check_layout(t, kInterleaveRows + 5, 96);  // a partial last group
    check_layout(t, 3, 288);                   // a single partial group
  }
}

TEST_CASE("interleave: sizes") {
  // Scales padded to a cache line, then kInterleaveRows rows of quants per block.
  constexpr int64_t kRows = kInterleaveRows;
  CHECK(kInterleavedVectorBytes == 4 * kRows);
  CHECK(interleaved_scales_bytes(64) == 64);
  CHECK(interleaved_scales_bytes(2048) == 64 * kRows * 2);
  CHECK(interleaved_group_bytes(TensorType::Q8_0, 2048) == 64 * kRows * 2 + 64 * kRows * 32);
  CHECK(interleaved_group_bytes(TensorType::Q4_0, 2048) == 64 * kRows * 2 + 64 * kRows * 16);
  CHECK(interleaved_bytes(TensorType::Q8_0, 2 * kRows + 1, 64) == 3 * interleaved_group_bytes(TensorType::Q8_0, 64));
  // Whole groups take exactly the GGUF bytes when the scales fill whole cache lines.
  CHECK(interleaved_bytes(TensorType::Q4_0, 256, 2048) == static_cast<int64_t>(row_bytes(TensorType::Q4_0, 2048)) * 256);
  CHECK(interleaved_bytes(TensorType::Q8_0, 256, 2048) == static_cast<int64_t>(row_bytes(TensorType::Q8_0, 2048)) * 256);
}

}  // namespace
