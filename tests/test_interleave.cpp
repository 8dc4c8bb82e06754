// The interleaved layouts (kernels/interleave.hpp, interleave_k.hpp): where
// each row's scales and quant bytes (Q8_0, Q4_0) or codes (K-quants) land,
// the zero padding of a last, partial group of rows, and the sizes.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/quant_k.hpp"

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

// A K-quant element's code, read from the GGUF block as the dequantizer does.
int gguf_code(TensorType t, const uint8_t* block, int j) {
  if (t == TensorType::Q4_K) return low_nibble_code(reinterpret_cast<const BlockQ4_K*>(block)->qs, j);
  if (t == TensorType::Q5_K) return q5_k_code(*reinterpret_cast<const BlockQ5_K*>(block), j);
  return q6_k_code(*reinterpret_cast<const BlockQ6_K*>(block), j);
}

uint16_t fp16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

// Each row's header fields where interleave_k.hpp puts them, and every code
// as the portable ops decode it (the instruction-set ops are checked against
// those by the matmul tests); rows past the end are zero.
template <TensorType T>
void check_k_layout(int rows, int cols) {
  CAPTURE(traits_of(T).name);
  CAPTURE(rows);
  CAPTURE(cols);
  constexpr int64_t kRows = kInterleaveRows;
  const std::vector<uint8_t> gguf = random_weights(T, rows, cols, rows * 7 + cols);
  std::vector<uint8_t> out(static_cast<size_t>(interleaved_bytes(T, rows, cols)), 0xAB);
  interleave_matrix(T, gguf.data(), out.data(), rows, cols);
  const int64_t block_bytes = traits_of(T).block_bytes;
  int mismatches = 0;
  for (int64_t g = 0; g < interleaved_groups(rows); ++g) {
    for (int sb = 0; sb < cols / kSuperBlockElems; ++sb) {
      const uint8_t* super = out.data() + g * interleaved_group_bytes(T, cols) + sb * k_super_block_group_bytes(T);
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = g * kRows + r;
        const bool real = row < rows;
        const uint8_t* block = real ? gguf.data() + (row * (cols / kSuperBlockElems) + sb) * block_bytes : nullptr;
        if (T == TensorType::Q6_K) {
          const auto* b = reinterpret_cast<const BlockQ6_K*>(block);
          if (fp16_at(super + 2 * r) != (real ? b->d : 0)) ++mismatches;
          for (int s = 0; s < 16; ++s)
            if (static_cast<int8_t>(super[2 * kRows + s * kRows + r]) != (real ? b->scales[s] : 0)) ++mismatches;
        } else {
          const auto* b = reinterpret_cast<const BlockQ4_K*>(block);  // Q5_K starts alike
          if (fp16_at(super + 2 * r) != (real ? b->d : 0)) ++mismatches;
          if (fp16_at(super + 2 * kRows + 2 * r) != (real ? b->dmin : 0)) ++mismatches;
          for (int s = 0; s < 8; ++s) {
            const ScaleMin sm = real ? unpack_scale_min(b->scales, s) : ScaleMin{0, 0};
            if (super[4 * kRows + s * kRows + r] != sm.scale || super[12 * kRows + s * kRows + r] != sm.min)
              ++mismatches;
          }
        }
      }
      const uint8_t* units = super + k_header_row_bytes(T) * kRows;
      for (int u = 0; u < kUnitsPerSuperBlock; ++u) {
        const auto q = PortableInt8Ops::decode_k<T>(units + u * k_unit_row_bytes(T) * kRows);
        for (int r = 0; r < kRows; ++r) {
          const int64_t row = g * kRows + r;
          for (int e = 0; e < kQuantBlockElems; ++e) {
            const int j = u * kQuantBlockElems + e;
            const int64_t at = (row * (cols / kSuperBlockElems) + sb) * block_bytes;
            const int expected = row < rows ? gguf_code(T, gguf.data() + at, j) : 0;
            if (q.v[r][e] != expected) ++mismatches;
          }
        }
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("interleave: K-quant headers and codes in their places") {
  check_k_layout<TensorType::Q4_K>(kInterleaveRows + 5, 512);  // a partial last group, two super-blocks
  check_k_layout<TensorType::Q5_K>(kInterleaveRows + 5, 512);
  check_k_layout<TensorType::Q6_K>(kInterleaveRows + 5, 512);
  check_k_layout<TensorType::Q4_K>(3, 256);  // a single partial group
  check_k_layout<TensorType::Q6_K>(1, 768);
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
  // K-quants: Q6_K takes the GGUF bytes; Q4_K and Q5_K 4 more per row and
  // super-block (their scales and mins unpacked to a byte each).
  CHECK(interleaved_bytes(TensorType::Q6_K, kRows, 512) == static_cast<int64_t>(row_bytes(TensorType::Q6_K, 512)) * kRows);
  CHECK(interleaved_bytes(TensorType::Q4_K, kRows, 512) == (static_cast<int64_t>(row_bytes(TensorType::Q4_K, 512)) + 8) * kRows);
  CHECK(interleaved_bytes(TensorType::Q5_K, kRows + 1, 256) == 2 * (176 + 4) * kRows);
}

}  // namespace
