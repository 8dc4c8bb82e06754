// The interleaved layouts (kernels/interleave.hpp, interleave_k.hpp): where
// each row's scales and quant bytes or codes land, for every interleaved
// type, the zero padding of a last, partial group of rows, and the sizes;
// and F32's column panels (kernels/float_columns.hpp).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/interleave.hpp"
#include "kernels/quant_iq4.hpp"
#include "kernels/quant_mxfp4.hpp"
#include "kernels/quant_k.hpp"
#include "kernels/quant_k_low.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

// A 32-element block type's element j as the portable ops decode it: Q8_0's
// signed weight, IQ4_NL's codebook value, MXFP4's doubled E2M1 value, the
// others' unsigned code.
int gguf_block_value(TensorType t, const uint8_t* block, int j) {
  switch (t) {
    case TensorType::MXFP4: return kMxfp4Values[block_nibble(reinterpret_cast<const BlockMXFP4*>(block)->qs, j)];
    case TensorType::Q8_0: return reinterpret_cast<const BlockQ8_0*>(block)->qs[j];
    case TensorType::Q4_0: return block_nibble(reinterpret_cast<const BlockQ4_0*>(block)->qs, j);
    case TensorType::Q5_0: return q5_code(*reinterpret_cast<const BlockQ5_0*>(block), j);
    case TensorType::Q5_1: return q5_code(*reinterpret_cast<const BlockQ5_1*>(block), j);
    default: return kIq4Values[block_nibble(reinterpret_cast<const BlockIQ4_NL*>(block)->qs, j)];
  }
}

PortableInt8Ops::Quants decode_block(TensorType t, const uint8_t* quants) {
  using Ops = PortableInt8Ops;
  switch (t) {
    case TensorType::Q8_0: return Ops::decode<TensorType::Q8_0>(quants);
    case TensorType::Q4_0: return Ops::decode<TensorType::Q4_0>(quants);
    case TensorType::Q5_0: return Ops::decode<TensorType::Q5_0>(quants);
    case TensorType::Q5_1: return Ops::decode<TensorType::Q5_1>(quants);
    case TensorType::MXFP4: return Ops::decode<TensorType::MXFP4>(quants);
    default: return Ops::decode<TensorType::IQ4_NL>(quants);
  }
}

// Each row's scales where interleave.hpp puts them; for the types stored as
// the GGUF's bytes, every quant byte in its place; and every element as the
// portable ops decode it (the instruction-set ops are checked against those
// by the matmul tests). A missing row of the last group reads as zero bytes.
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
  const int64_t field_bytes = block_scale_field_bytes(t);
  const bool copied =
      t == TensorType::Q8_0 || t == TensorType::Q4_0 || t == TensorType::IQ4_NL || t == TensorType::MXFP4;
  int mismatches = 0;
  for (int64_t g = 0; g < interleaved_groups(rows); ++g) {
    const uint8_t* group = out.data() + g * interleaved_group_bytes(t, cols);
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* block_quants = group + block_quants_offset(t, b);
      const auto decoded = decode_block(t, block_quants);
      for (int r = 0; r < kInterleaveRows; ++r) {
        const int64_t row = g * kInterleaveRows + r;
        std::vector<uint8_t> block(static_cast<size_t>(block_bytes), 0);
        if (row < rows) std::memcpy(block.data(), gguf.data() + (row * n_blocks + b) * block_bytes, block.size());
        const uint8_t* scales = group + block_scales_offset(t, b);
        if (std::memcmp(scales + r * field_bytes, block.data(), static_cast<size_t>(field_bytes)) != 0)
          ++mismatches;  // d (MXFP4: e)
        if (t == TensorType::Q5_1 && std::memcmp(scales + kInterleaveRows * 2 + r * 2, block.data() + 2, 2) != 0)
          ++mismatches;  // m
        for (int64_t j = 0; copied && j < quant_bytes; ++j)
          if (block_quants[(j / 4) * kInterleavedVectorBytes + r * 4 + j % 4] != block[field_bytes + j]) ++mismatches;
        for (int e = 0; e < kQuantBlockElems; ++e)
          if (decoded.v[r][e] != gguf_block_value(t, block.data(), e)) ++mismatches;
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("interleave: every byte in its place") {
  for (TensorType t : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q5_0, TensorType::Q5_1, TensorType::IQ4_NL,
                       TensorType::MXFP4}) {
    check_layout(t, kInterleaveRows, 32);
    check_layout(t, kInterleaveRows + 5, 96);  // a partial last group
    check_layout(t, 3, 288);                   // a single partial group
  }
}

// A super-block type's element code, read from the GGUF block as the
// dequantizer does (IQ4_XS's as its codebook value).
int gguf_code(TensorType t, const uint8_t* block, int j) {
  switch (t) {
    case TensorType::Q2_K: return low_crumb_code(reinterpret_cast<const BlockQ2_K*>(block)->qs, j);
    case TensorType::Q3_K: return q3_k_code(*reinterpret_cast<const BlockQ3_K*>(block), j);
    case TensorType::Q4_K: return low_nibble_code(reinterpret_cast<const BlockQ4_K*>(block)->qs, j);
    case TensorType::Q5_K: return q5_k_code(*reinterpret_cast<const BlockQ5_K*>(block), j);
    case TensorType::Q6_K: return q6_k_code(*reinterpret_cast<const BlockQ6_K*>(block), j);
    default: return kIq4Values[iq4_xs_nibble(*reinterpret_cast<const BlockIQ4_XS*>(block), j)];
  }
}

// The header bytes interleave_k.hpp gives a GGUF super-block, in its order
// (d, then dmin where the type has one, then the scales and mins); zeros
// for a missing row.
std::vector<uint8_t> expected_header(TensorType t, const uint8_t* block) {
  std::vector<uint8_t> h(static_cast<size_t>(k_header_row_bytes(t)), 0);
  if (!block) return h;
  const auto put16 = [&](size_t at, uint16_t v) { std::memcpy(h.data() + at, &v, 2); };
  switch (t) {
    case TensorType::Q6_K: {
      const auto* b = reinterpret_cast<const BlockQ6_K*>(block);
      put16(0, b->d);
      for (int s = 0; s < 16; ++s) h[2 + s] = static_cast<uint8_t>(b->scales[s]);
      break;
    }
    case TensorType::Q3_K: {
      const auto* b = reinterpret_cast<const BlockQ3_K*>(block);
      put16(0, b->d);
      for (int s = 0; s < 16; ++s) h[2 + s] = static_cast<uint8_t>(q3_k_scale(*b, s));
      break;
    }
    case TensorType::Q2_K: {
      const auto* b = reinterpret_cast<const BlockQ2_K*>(block);
      put16(0, b->d);
      put16(2, b->dmin);
      for (int s = 0; s < 16; ++s) h[4 + s] = b->scales[s];
      break;
    }
    case TensorType::IQ4_XS: {
      const auto* b = reinterpret_cast<const BlockIQ4_XS*>(block);
      put16(0, b->d);
      for (int s = 0; s < 8; ++s) h[2 + s] = static_cast<uint8_t>(iq4_xs_scale(*b, s));
      break;
    }
    default: {  // Q4_K; Q5_K starts alike
      const auto* b = reinterpret_cast<const BlockQ4_K*>(block);
      put16(0, b->d);
      put16(2, b->dmin);
      for (int s = 0; s < 8; ++s) {
        h[4 + s] = static_cast<uint8_t>(unpack_scale_min(b->scales, s).scale);
        h[12 + s] = static_cast<uint8_t>(unpack_scale_min(b->scales, s).min);
      }
      break;
    }
  }
  return h;
}

// Where byte `at` of a row's header (expected_header's order) lies in the
// group's header: each 2-byte field, then each scale byte, for all rows.
int64_t header_offset(TensorType t, int64_t r, int at) {
  constexpr int64_t kRows = kInterleaveRows;
  const int fp16_fields = t == TensorType::Q4_K || t == TensorType::Q5_K || t == TensorType::Q2_K ? 2 : 1;
  if (at < 2 * fp16_fields) return at / 2 * 2 * kRows + 2 * r + at % 2;
  return 2 * fp16_fields * kRows + (at - 2 * fp16_fields) * kRows + r;
}

// Each row's header fields where interleave_k.hpp puts them, and every code
// as the portable ops decode it (the instruction-set ops are checked against
// those by the matmul tests); rows past the end are zero bytes.
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
  const std::vector<uint8_t> zero_block(static_cast<size_t>(block_bytes), 0);  // what a missing row decodes as
  int mismatches = 0;
  for (int64_t g = 0; g < interleaved_groups(rows); ++g) {
    for (int sb = 0; sb < cols / kSuperBlockElems; ++sb) {
      const uint8_t* super = out.data() + g * interleaved_group_bytes(T, cols) + sb * k_super_block_group_bytes(T);
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = g * kRows + r;
        const uint8_t* block = row < rows ? gguf.data() + (row * (cols / kSuperBlockElems) + sb) * block_bytes : nullptr;
        const std::vector<uint8_t> header = expected_header(T, block);
        for (int at = 0; at < static_cast<int>(header.size()); ++at)
          if (super[header_offset(T, r, at)] != header[at]) ++mismatches;
      }
      const uint8_t* units = super + k_header_row_bytes(T) * kRows;
      for (int u = 0; u < kUnitsPerSuperBlock; ++u) {
        const auto q = PortableInt8Ops::decode_k<T>(units + u * k_unit_row_bytes(T) * kRows);
        for (int r = 0; r < kRows; ++r) {
          const int64_t row = g * kRows + r;
          for (int e = 0; e < kQuantBlockElems; ++e) {
            const int j = u * kQuantBlockElems + e;
            const int64_t at = (row * (cols / kSuperBlockElems) + sb) * block_bytes;
            const int expected = gguf_code(T, row < rows ? gguf.data() + at : zero_block.data(), j);
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
  check_k_layout<TensorType::Q3_K>(kInterleaveRows + 5, 512);
  check_k_layout<TensorType::Q2_K>(kInterleaveRows + 5, 512);
  check_k_layout<TensorType::IQ4_XS>(kInterleaveRows + 5, 512);
  check_k_layout<TensorType::Q4_K>(3, 256);  // a single partial group
  check_k_layout<TensorType::Q6_K>(1, 768);
  check_k_layout<TensorType::Q2_K>(2, 256);
}

TEST_CASE("interleave: sizes") {
  // Scales padded to a cache line, then kInterleaveRows rows of quants per block.
  constexpr int64_t kRows = kInterleaveRows;
  CHECK(kInterleavedVectorBytes == 4 * kRows);
  CHECK(interleaved_scales_bytes(TensorType::Q4_0, 64) == 64);
  CHECK(interleaved_scales_bytes(TensorType::Q8_0, 2048) == 64 * kRows * 2);
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
  // Q2_K the GGUF bytes; Q3_K 4 and IQ4_XS 2 more per row and super-block.
  CHECK(interleaved_bytes(TensorType::Q2_K, kRows, 512) == static_cast<int64_t>(row_bytes(TensorType::Q2_K, 512)) * kRows);
  CHECK(interleaved_bytes(TensorType::Q3_K, kRows, 512) == (static_cast<int64_t>(row_bytes(TensorType::Q3_K, 512)) + 8) * kRows);
  CHECK(interleaved_bytes(TensorType::IQ4_XS, kRows, 512) == (static_cast<int64_t>(row_bytes(TensorType::IQ4_XS, 512)) + 4) * kRows);
  // The 32-element types' spans: a line of scales, then the quants of the
  // blocks whose scales it holds, whatever the rows per group.
  CHECK(span_blocks(TensorType::Q8_0) * kRows * 2 == 64);
  CHECK(block_quants_offset(TensorType::Q8_0, 0) == 64);
  CHECK(block_scales_offset(TensorType::Q8_0, 1) == kRows * 2);
  CHECK(block_quants_offset(TensorType::Q8_0, 1) == 64 + kRows * 32);
  CHECK(block_scales_offset(TensorType::Q8_0, span_blocks(TensorType::Q8_0)) == 64 + 1024);
  CHECK(block_scales_offset(TensorType::Q4_0, span_blocks(TensorType::Q4_0)) == 64 + 512);
  CHECK(block_scales_offset(TensorType::Q5_1, span_blocks(TensorType::Q5_1)) == 64 + 320);
  CHECK(block_scales_offset(TensorType::MXFP4, span_blocks(TensorType::MXFP4)) == 64 + 1024);
  // A last, partial span keeps a whole line of scales.
  CHECK(interleaved_scales_bytes(TensorType::Q8_0, 32 * (span_blocks(TensorType::Q8_0) + 1)) == 128);
  // Q5_1's scales and mins padded together.
  CHECK(interleaved_scales_bytes(TensorType::Q5_1, 2048) == 64 * kRows * 4);
  CHECK(interleaved_bytes(TensorType::Q5_0, 256, 2048) == static_cast<int64_t>(row_bytes(TensorType::Q5_0, 2048)) * 256);
  CHECK(interleaved_bytes(TensorType::Q5_1, 256, 2048) == static_cast<int64_t>(row_bytes(TensorType::Q5_1, 2048)) * 256);
  CHECK(interleaved_bytes(TensorType::IQ4_NL, 256, 2048) == static_cast<int64_t>(row_bytes(TensorType::IQ4_NL, 2048)) * 256);
}

TEST_CASE("float columns: each value at its row's lane of its column, zero rows after the last") {
  // Only F32 rows shorter than the limit are repacked; a 3-D tensor's matrices
  // each take whole groups of rows.
  CHECK(is_repacked(TensorType::F32, kFloatColumnsMaxCols - 1));
  CHECK_FALSE(is_repacked(TensorType::F32, kFloatColumnsMaxCols));
  CHECK_FALSE(is_repacked(TensorType::F16, 64));
  constexpr int64_t kRows = kFloatLanes + 3, kCols = 37;
  CHECK(matmul_matrix_bytes(TensorType::F32, kRows, kCols) == 2 * kFloatLanes * kCols * 4);

  std::vector<float> w(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) w[i] = static_cast<float>(i + 1);
  std::vector<float> out(2 * kFloatLanes * kCols, -1.0f);
  pack_matrix(TensorType::F32, w.data(), out.data(), kRows, kCols);
  for (int64_t r = 0; r < 2 * kFloatLanes; ++r)
    for (int64_t k = 0; k < kCols; ++k) {
      const float got = out[(r / kFloatLanes * kCols + k) * kFloatLanes + r % kFloatLanes];
      CHECK(got == (r < kRows ? w[r * kCols + k] : 0.0f));
    }
}

TEST_CASE("float rows: a row of an even number of cache lines, 2 KiB or more, is followed by one of zeros") {
  CHECK(float_row_stride(TensorType::F32, 2048) == 8192 + 64);
  CHECK(float_row_stride(TensorType::F16, 1088) == 2176 + 64);  // 34 lines
  CHECK(float_row_stride(TensorType::BF16, 4096) == 8192 + 64);
  CHECK(float_row_stride(TensorType::F32, 528) == 2112);   // 33 lines: already odd
  CHECK(float_row_stride(TensorType::F16, 512) == 1024);   // under 2 KiB
  CHECK(float_row_stride(TensorType::F32, 1043) == 4172);  // not whole lines
  CHECK_FALSE(is_repacked(TensorType::F32, 1043));
  CHECK(float_row_stride(TensorType::Q8_0, 2048) == static_cast<int64_t>(row_bytes(TensorType::Q8_0, 2048)));
  constexpr int64_t kRows = 3, kCols = 1024;
  REQUIRE(is_repacked(TensorType::F32, kCols));
  CHECK(matmul_matrix_bytes(TensorType::F32, kRows, kCols) == kRows * (kCols * 4 + 64));

  std::vector<float> w(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) w[i] = static_cast<float>(i + 1);
  std::vector<float> out(static_cast<size_t>(matmul_matrix_bytes(TensorType::F32, kRows, kCols) / 4), -1.0f);
  pack_matrix(TensorType::F32, w.data(), out.data(), kRows, kCols);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t k = 0; k < kCols + 16; ++k) CHECK(out[r * (kCols + 16) + k] == (k < kCols ? w[r * kCols + k] : 0.0f));
}

}  // namespace
