#include "kernels/interleave_k.hpp"

#include <cstring>

#include "kernels/interleave_unit.hpp"
#include "kernels/quant_iq4.hpp"
#include "kernels/quant_k_low.hpp"

namespace kiln::kernels {

namespace {

constexpr int64_t kRows = kInterleaveRows;

// The 256 codes and the header fields of one super-block of one row.
struct SuperBlockCodes {
  uint16_t d = 0;
  uint16_t dmin = 0;        // Q4_K, Q5_K, Q2_K
  uint8_t scales[16] = {};  // one byte per sub-block, as the header stores them
  uint8_t mins[8] = {};     // Q4_K, Q5_K
  uint8_t codes[kSuperBlockElems] = {};
};

template <class Block>
Block read_block(const uint8_t* bytes) {
  Block b;
  std::memcpy(&b, bytes, sizeof b);
  return b;
}

template <class Block>
void read_affine(const Block& b, SuperBlockCodes& s) {
  s.d = b.d;
  s.dmin = b.dmin;
  for (int sub = 0; sub < 8; ++sub) {
    const ScaleMin sm = unpack_scale_min(b.scales, sub);
    s.scales[sub] = static_cast<uint8_t>(sm.scale);
    s.mins[sub] = static_cast<uint8_t>(sm.min);
  }
}

SuperBlockCodes read_super_block(TensorType t, const uint8_t* bytes) {
  SuperBlockCodes s;
  switch (t) {
    case TensorType::Q6_K: {
      const auto b = read_block<BlockQ6_K>(bytes);
      s.d = b.d;
      std::memcpy(s.scales, b.scales, sizeof b.scales);
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(q6_k_code(b, j));
      break;
    }
    case TensorType::Q5_K: {
      const auto b = read_block<BlockQ5_K>(bytes);
      read_affine(b, s);
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(q5_k_code(b, j));
      break;
    }
    case TensorType::Q4_K: {
      const auto b = read_block<BlockQ4_K>(bytes);
      read_affine(b, s);
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(low_nibble_code(b.qs, j));
      break;
    }
    case TensorType::Q3_K: {
      const auto b = read_block<BlockQ3_K>(bytes);
      s.d = b.d;
      for (int sub = 0; sub < 16; ++sub) s.scales[sub] = static_cast<uint8_t>(q3_k_scale(b, sub));
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(q3_k_code(b, j));
      break;
    }
    case TensorType::Q2_K: {
      const auto b = read_block<BlockQ2_K>(bytes);
      s.d = b.d;
      s.dmin = b.dmin;
      std::memcpy(s.scales, b.scales, sizeof b.scales);
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(low_crumb_code(b.qs, j));
      break;
    }
    default: {  // IQ4_XS
      const auto b = read_block<BlockIQ4_XS>(bytes);
      s.d = b.d;
      for (int sub = 0; sub < 8; ++sub) s.scales[sub] = static_cast<uint8_t>(iq4_xs_scale(b, sub));
      for (int j = 0; j < kSuperBlockElems; ++j) s.codes[j] = static_cast<uint8_t>(iq4_xs_nibble(b, j));
      break;
    }
  }
  return s;
}

// Row r's header fields, as interleave_k.hpp lays them out.
void write_header(TensorType t, const SuperBlockCodes& s, int64_t r, uint8_t* super) {
  std::memcpy(super + 2 * r, &s.d, 2);
  const bool has_dmin = t == TensorType::Q4_K || t == TensorType::Q5_K || t == TensorType::Q2_K;
  const int n_scales = t == TensorType::Q4_K || t == TensorType::Q5_K || t == TensorType::IQ4_XS ? 8 : 16;
  uint8_t* scales = super + (has_dmin ? 4 : 2) * kRows;
  if (has_dmin) std::memcpy(super + 2 * kRows + 2 * r, &s.dmin, 2);
  for (int sub = 0; sub < n_scales; ++sub) scales[sub * kRows + r] = s.scales[sub];
  if (t == TensorType::Q4_K || t == TensorType::Q5_K)
    for (int sub = 0; sub < 8; ++sub) super[12 * kRows + sub * kRows + r] = s.mins[sub];
}

// Row r's share of one unit (32 codes) at `unit`, as interleave_k.hpp lays it out.
void write_unit(TensorType t, const uint8_t* codes, int64_t r, uint8_t* unit) {
  constexpr int64_t kVector = kInterleavedVectorBytes;
  for (int e = 0; e < kQuantBlockElems; ++e) {
    const int code = codes[e];
    switch (t) {
      case TensorType::Q2_K: unit::put_crumb(unit, r, e, code); break;
      case TensorType::Q3_K:
        unit::put_crumb(unit, r, e, code & 3);
        unit::put_bit(unit + 2 * kVector, r, e, code >> 2);
        break;
      case TensorType::Q5_K:
        unit::put_nibble(unit, r, e, code & 0x0f);
        unit::put_bit(unit + 4 * kVector, r, e, code >> 4);
        break;
      case TensorType::Q6_K:
        unit::put_nibble(unit, r, e, code & 0x0f);
        unit::put_crumb(unit + 4 * kVector, r, e, code >> 4);
        break;
      default: unit::put_nibble(unit, r, e, code); break;  // Q4_K, IQ4_XS
    }
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
      write_header(t, s, r, super);
      uint8_t* units = super + k_header_row_bytes(t) * kRows;
      for (int u = 0; u < kUnitsPerSuperBlock; ++u)
        write_unit(t, s.codes + u * kQuantBlockElems, r, units + u * k_unit_row_bytes(t) * kRows);
    }
  }
}

}  // namespace kiln::kernels
