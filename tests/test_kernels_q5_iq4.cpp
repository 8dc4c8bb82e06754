// Q5_0, Q5_1, IQ4_NL and IQ4_XS: blocks built by hand from the layout,
// quantization (known blocks and round trips), matmul against the scalar
// reference and get_rows against the reference decoder.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"
#include "kernels/quant_iq4.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

std::vector<float> dequantized(TensorType t, const void* data, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(t, data, out.data(), n);
  return out;
}

// The codebook, written out here from the format's definition.
constexpr float kCodebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// ---------------------------------------------------------------------------
// blocks built by hand

// Nibbles j (element j) and 15 - j (element j + 16) in byte j; fifth bits
// 0x5555 for elements 0..15 (the even ones) and 0xaaaa for 16..31 (the odd
// ones), in the little-endian word qh.
template <class Block>
void fill_q5_codes(Block& b) {
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const uint8_t qh[4] = {0x55, 0x55, 0xaa, 0xaa};
  std::memcpy(b.qh, qh, 4);
}

int hand_built_q5_code(int j) {
  const int nibble = j < 16 ? j : 31 - j;
  return nibble + (j % 2 == (j < 16 ? 0 : 1) ? 16 : 0);
}

TEST_CASE("Q5_0: a block built by hand") {
  BlockQ5_0 b{};
  b.d = 0x3800;  // 0.5
  fill_q5_codes(b);
  const std::vector<float> v = dequantized(TensorType::Q5_0, &b, 32);
  // value = d * (code - 16)
  CHECK(v[0] == 0.0f);    // nibble 0, fifth bit set: code 16
  CHECK(v[1] == -7.5f);   // nibble 1: code 1
  CHECK(v[14] == 7.0f);   // nibble 14, fifth bit set: code 30
  CHECK(v[16] == -0.5f);  // high nibble 15 of byte 0: code 15
  CHECK(v[17] == 7.0f);   // high nibble 14 of byte 1, fifth bit set: code 30
  CHECK(v[31] == 0.0f);   // high nibble 0 of byte 15, fifth bit set: code 16
  for (int j = 0; j < 32; ++j) {
    CAPTURE(j);
    CHECK(v[j] == 0.5f * static_cast<float>(hand_built_q5_code(j) - 16));
  }
}

TEST_CASE("Q5_1: a block built by hand") {
  BlockQ5_1 b{};
  b.d = 0x3400;  // 0.25
  b.m = 0xc000;  // -2
  fill_q5_codes(b);
  const std::vector<float> v = dequantized(TensorType::Q5_1, &b, 32);
  // value = d * code + m
  CHECK(v[0] == 2.0f);     // code 16
  CHECK(v[1] == -1.75f);   // code 1
  CHECK(v[16] == 1.75f);   // code 15
  CHECK(v[17] == 5.5f);    // code 30
  for (int j = 0; j < 32; ++j) {
    CAPTURE(j);
    CHECK(v[j] == 0.25f * static_cast<float>(hand_built_q5_code(j)) - 2.0f);
  }
}

TEST_CASE("IQ4_NL: a block built by hand") {
  BlockIQ4_NL b{};
  b.d = 0x4000;  // 2
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> v = dequantized(TensorType::IQ4_NL, &b, 32);
  // value = d * codebook[nibble]
  CHECK(v[0] == -254.0f);  // code 0: -127
  CHECK(v[8] == 2.0f);     // code 8: 1
  CHECK(v[15] == 226.0f);  // code 15: 113
  CHECK(v[16] == 226.0f);  // high nibble 15 of byte 0
  CHECK(v[31] == -254.0f);
  for (int j = 0; j < 32; ++j) {
    CAPTURE(j);
    CHECK(v[j] == 2.0f * kCodebook[j < 16 ? j : 31 - j]);
  }
}

TEST_CASE("IQ4_XS: a block built by hand") {
  // Sub-block scales 0, 1, 31, 32, 33, 47, 63, 20 (less 32: -32, -31, -1, 0,
  // 1, 15, 31, -12): low 4 bits in nibble s % 2 of scales_l[s / 2], top 2
  // bits at bits 2s, 2s + 1 of scales_h.
  constexpr int kScales[8] = {-32, -31, -1, 0, 1, 15, 31, -12};
  BlockIQ4_XS b{};
  b.d = 0x3800;  // 0.5
  b.scales_h = 0x7a90;  // top bits 0, 0, 1, 2, 2, 2, 3, 1
  const uint8_t scales_l[4] = {0x10, 0x0f, 0xf1, 0x4f};
  std::memcpy(b.scales_l, scales_l, 4);
  for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<uint8_t>(i);
  // Sub-block s owns qs[16s ..]: element j < 16 is the low nibble of byte
  // 16s + j (j), element 16 + j its high nibble (s).
  const std::vector<float> v = dequantized(TensorType::IQ4_XS, &b, 256);
  CHECK(v[0] == 2032.0f);   // 0.5 * -32 * -127
  CHECK(v[33] == 1612.0f);  // 0.5 * -31 * -104
  CHECK(v[100] == 0.0f);    // scale 0
  CHECK(v[140] == 26.5f);   // 0.5 * 1 * 53
  CHECK(v[170] == 187.5f);  // 0.5 * 15 * 25
  CHECK(v[255] == 60.0f);   // high nibble 7: 0.5 * -12 * -10
  for (int j = 0; j < 256; ++j) {
    CAPTURE(j);
    const int s = j / 32;
    const int code = j % 32 < 16 ? j % 16 : s;
    CHECK(v[j] == 0.5f * static_cast<float>(kScales[s]) * kCodebook[code]);
  }
}

// ---------------------------------------------------------------------------
// quantization

TEST_CASE("Q5_0 and Q5_1: known blocks") {
  // Largest magnitude -1.6 gives Q5_0 d = 0.1: value (j - 16) / 10 is code j.
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16) / 10.0f;
  BlockQ5_0 q5_0;
  quantize_row(TensorType::Q5_0, x.data(), &q5_0, 32);
  CHECK(q5_0.d == fp32_to_fp16(0.1f));
  for (int j = 0; j < 32; ++j) CHECK(q5_code(q5_0, j) == j);

  // Largest magnitude +4 gives d = -0.25: 4 is code 0, 1 code 12.
  x.assign(32, 1.0f);
  x[20] = 4.0f;
  quantize_row(TensorType::Q5_0, x.data(), &q5_0, 32);
  CHECK(q5_0.d == 0xb400);
  for (int j = 0; j < 32; ++j) CHECK(q5_code(q5_0, j) == (j == 20 ? 0 : 12));
  expect_same_bits(dequantized(TensorType::Q5_0, &q5_0, 32), x);  // exactly representable

  // Q5_1 spans [-1, 2.1] in 31 steps of 0.1 from the min -1.
  for (int j = 0; j < 32; ++j) x[j] = -1.0f + static_cast<float>(j) / 10.0f;
  BlockQ5_1 q5_1;
  quantize_row(TensorType::Q5_1, x.data(), &q5_1, 32);
  CHECK(q5_1.d == fp32_to_fp16((x[31] - x[0]) / 31.0f));
  CHECK(q5_1.m == 0xbc00);
  for (int j = 0; j < 32; ++j) CHECK(q5_code(q5_1, j) == j);
}

TEST_CASE("Q5_0 and Q5_1: quantize then dequantize stays within a step") {
  const int n = 32 * 9;
  std::vector<float> x = random_floats(n, 1, -3.0f, 3.0f);
  for (int j = 32; j < 64; ++j) x[j] = 0.0f;                        // all zero
  for (int j = 64; j < 96; ++j) x[j] = 1.5f + x[j] / 8;              // all positive
  for (int j = 96; j < 128; ++j) x[j] = -1.5f + x[j] / 8;            // all negative
  for (TensorType t : {TensorType::Q5_0, TensorType::Q5_1}) {
    CAPTURE(traits_of(t).name);
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    const std::vector<float> back = dequantized(t, q.data(), n);
    for (int b = 0; b < n / 32; ++b) {
      const auto [lo, hi] = std::minmax_element(x.begin() + 32 * b, x.begin() + 32 * b + 32);
      const double amax = std::max(std::fabs(*lo), std::fabs(*hi));
      for (int j = 32 * b; j < 32 * b + 32; ++j) {
        // Q5_0: half a step of amax / 16, or a whole one where the element
        // opposite the maximum is clamped from 16 steps to 15; Q5_1: half a
        // step of (max - min) / 31. Plus the fp16 rounding (relative 2^-11)
        // of d times the largest code, and of Q5_1's min.
        const double tol = t == TensorType::Q5_0 ? amax / 16 * (1.0 + 16 * 0x1p-11)
                                                 : (*hi - *lo) / 31 * (0.5 + 31 * 0x1p-11) + std::fabs(*lo) * 0x1p-11;
        if (std::fabs(back[j] - x[j]) > tol + 1e-6) FAIL_CHECK("element " << j << ": " << back[j] << " vs " << x[j]);
      }
    }
    for (int j = 32; j < 64; ++j) CHECK(back[j] == 0.0f);
  }
}

// Every element decodes to the codebook value nearest to it under its
// block's scale as stored, and the rows lose less than a tenth of their RMS
// (4-bit codes spaced 10-24 units apart over a range of 240).
void check_iq4_round_trip(TensorType t, int n, uint32_t seed) {
  CAPTURE(traits_of(t).name);
  std::vector<float> x = random_floats(static_cast<size_t>(n), seed, -2.0f, 2.0f);
  std::fill(x.begin() + 256, x.begin() + 512, 0.0f);  // all-zero blocks stay zero
  for (int j = 512; j < 544; ++j) x[j] *= 1e-3f;     // one block far smaller than its neighbours
  std::vector<uint8_t> q(row_bytes(t, n));
  quantize_row(t, x.data(), q.data(), n);
  const std::vector<float> back = dequantized(t, q.data(), n);
  double error = 0.0, total = 0.0;
  for (int j = 0; j < n; ++j) {
    // The block's scale as stored: d (IQ4_NL), or d times the sub-block's scale.
    float scale;
    if (t == TensorType::IQ4_NL) {
      scale = fp16_to_fp32(reinterpret_cast<const BlockIQ4_NL*>(q.data())[j / 32].d);
    } else {
      const BlockIQ4_XS& b = reinterpret_cast<const BlockIQ4_XS*>(q.data())[j / 256];
      scale = fp16_to_fp32(b.d) * static_cast<float>(iq4_xs_scale(b, j % 256 / 32));
    }
    double nearest = INFINITY;
    for (float c : kCodebook) nearest = std::min(nearest, std::fabs(static_cast<double>(scale) * c - x[j]));
    if (std::fabs(back[j] - x[j]) > nearest * (1 + 1e-6) + 1e-9) {
      FAIL_CHECK("element " << j << ": " << back[j] << " for " << x[j] << ", scale " << scale);
      break;
    }
    error += (static_cast<double>(back[j]) - x[j]) * (back[j] - x[j]);
    total += static_cast<double>(x[j]) * x[j];
  }
  CHECK(std::sqrt(error / total) < 0.1);
  for (int j = 256; j < 512; ++j) CHECK(back[j] == 0.0f);
}

TEST_CASE("IQ4_NL and IQ4_XS: quantized values are the nearest the scales allow") {
  check_iq4_round_trip(TensorType::IQ4_NL, 8 * 256, 3);
  check_iq4_round_trip(TensorType::IQ4_XS, 8 * 256, 4);
}

// ---------------------------------------------------------------------------
// matmul and get_rows

TEST_CASE("matmul: Q5_0") {
  check_matmul_all_rows<TensorType::Q5_0, 32>();
  check_matmul_all_rows<TensorType::Q5_0, 96>();
  check_matmul_all_rows<TensorType::Q5_0, 288>();
}

TEST_CASE("matmul: Q5_1") {
  check_matmul_all_rows<TensorType::Q5_1, 32>();
  check_matmul_all_rows<TensorType::Q5_1, 96>();
  check_matmul_all_rows<TensorType::Q5_1, 288>();
}

TEST_CASE("matmul: IQ4_NL") {
  check_matmul_all_rows<TensorType::IQ4_NL, 32>();
  check_matmul_all_rows<TensorType::IQ4_NL, 96>();
  check_matmul_all_rows<TensorType::IQ4_NL, 288>();
}

TEST_CASE("matmul: IQ4_XS") {
  check_matmul_all_rows<TensorType::IQ4_XS, 256>();
  check_matmul_all_rows<TensorType::IQ4_XS, 768>();
}

TEST_CASE("matmul: the largest integer products of Q5_0, Q5_1, IQ4_NL and IQ4_XS") {
  // Codes 31 (every bit set) and the codebook's ends, -127 (code 0) and 113.
  BlockQ5_0 q5_0;
  std::memset(&q5_0, 0xff, sizeof q5_0);
  q5_0.d = fp32_to_fp16(0.5f);
  check_largest_products<TensorType::Q5_0>(q5_0);
  BlockQ5_1 q5_1;
  std::memset(&q5_1, 0xff, sizeof q5_1);
  q5_1.d = fp32_to_fp16(0.5f);
  q5_1.m = fp32_to_fp16(-3.0f);
  check_largest_products<TensorType::Q5_1>(q5_1);
  for (uint8_t nibbles : {0x00, 0xff}) {
    BlockIQ4_NL nl;
    std::memset(&nl, nibbles, sizeof nl);
    nl.d = fp32_to_fp16(0.5f);
    check_largest_products<TensorType::IQ4_NL>(nl);
    BlockIQ4_XS xs;
    std::memset(&xs, nibbles, sizeof xs);
    xs.d = fp32_to_fp16(0.5f);
    xs.scales_h = 0;  // scales 0x0 or 0xf less 32
    check_largest_products<TensorType::IQ4_XS>(xs);
  }
}

TEST_CASE("get_rows: Q5_0, Q5_1, IQ4_NL, IQ4_XS") {
  check_get_rows<TensorType::Q5_0, 96>();
  check_get_rows<TensorType::Q5_1, 96>();
  check_get_rows<TensorType::IQ4_NL, 96>();
  check_get_rows<TensorType::IQ4_XS, 512>();
}

}  // namespace
