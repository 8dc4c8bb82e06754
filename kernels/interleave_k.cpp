#include "kernels/interleave_k.hpp"

#include <cstring>

namespace kiln::kernels {

namespace {

constexpr int64_t kRows = kInterleaveRows;

// The 256 codes and the header fields of one super-block of one row.
struct SuperBlockCodes {
  uint16_t d = 0;
  uint16_t dmin = 0;              // Q4_K, Q5_K
  uint8_t scales[16] = {};        // 8 (Q4_K, Q5_K) or 16 (Q6_K, as int8 bits)
  uint8_t mins[8] = {};           // Q4_K, Q5_K
  uint8_t codes[kSuperBlockElems] = {};
};

template <class Block>
Block read_block(const uint8_t* bytes) {
  Block b;
  std::memcpy(&b, bytes, sizeof b);
  return b;
}

SuperBlockCodes read_super_block(TensorType t, const uint8_t* bytes) {
  SuperBlockCodes s;
  if (t == TensorType::Q6_K) {
    const auto b = read_block<BlockQ6_K>(bytes);
    s.d = b.d;
    std::memcpy(s.scales, b.scales, sizeof b.scales);
    for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(q6_k_code(b, j));
    return s;
  }
  const auto fill_affine = [&s](const auto& b) {
    s.d = b.d;
    s.dmin = b.dmin;
    for (int sub = 0; sub < 8; ++sub) {
      const ScaleMin sm = unpack_scale_min(b.scales, sub);
      s.scales[sub] = static_cast<uint8_t>(sm.scale);
      s.mins[sub] = static_cast<uint8_t>(sm.min);
    }
  };
  if (t == TensorType::Q5_K) {
    const auto b = read_block<BlockQ5_K>(bytes);
    fill_affine(b);
    for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(q5_k_code(b, j));
  } else {
    const auto b = read_block<BlockQ4_K>(bytes);
    fill_affine(b);
    for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(low_nibble_code(b.qs, j));
  }
  return s;
}

// Row r's share of one unit (32 codes) at `unit`, as interleave_k.hpp lays it out.
void write_unit(TensorType t, const uint8_t* codes, int64_t r, uint8_t* unit) {
  uint8_t* high = unit + 16 * kRows;
  for (int e = 0; e < kQuantBlockElems; ++e) {
    const int half = e / 16, v = e % 16 / 4, k = e % 4;
    unit[v * 4 * kRows + r * 4 + k] |= static_cast<uint8_t>((codes[e] & 0x0f) << (4 * half));
    if (t == TensorType::Q5_K)
      high[r * 4 + k] |= static_cast<uint8_t>((codes[e] >> 4 & 1) << (4 * half + v));
    else if (t == TensorType::Q6_K)
      high[half * 4 * kRows + r * 4 + k] |= static_cast<uint8_t>((codes[e] >> 4) << (2 * v));
  }
}

}  // namespace

void interleave_k_group(TensorType t, const uint8_t* gguf, uint8_t* group, int64_t first_row, int64_t rows,
                        int64_t cols) {
  const int64_t n_super = cols / kSuperBlockElems;
  const int64_t block_bytes = traits_of(t).block_bytes;
  std::memset(group, 0, static_cast<size_t>(k_interleaved_group_bytes(t, cols)));
  for (int64_t r = 0; r < kRows && first_row + r < rows; ++r) {
    const uint8_t* row = gguf + (first_row + r) * n_super * block_bytes;
    for (int64_t sb = 0; sb < n_super; ++sb) {
      const SuperBlockCodes s = read_super_block(t, row + sb * block_bytes);
      uint8_t* super = group + sb * k_super_block_group_bytes(t);
      std::memcpy(super + 2 * r, &s.d, 2);
      if (t == TensorType::Q6_K) {
        for (int sub = 0; sub < 16; ++sub) super[2 * kRows + sub * kRows + r] = s.scales[sub];
      } else {
        std::memcpy(super + 2 * kRows + 2 * r, &s.dmin, 2);
        for (int sub = 0; sub < 8; ++sub) {
          super[4 * kRows + sub * kRows + r] = s.scales[sub];
          super[12 * kRows + sub * kRows + r] = s.mins[sub];
        }
      }
      uint8_t* units = super + k_header_row_bytes(t) * kRows;
      for (int u = 0; u < kUnitsPerSuperBlock; ++u)
        write_unit(t, s.codes + u * kQuantBlockElems, r, units + u * k_unit_row_bytes(t) * kRows);
    }
  }
}

}  // namespace kiln::kernels
