// Q3_K and Q2_K: blocks built by hand from the layout, quantization round
// trips, matmul against the scalar reference and get_rows against the
// reference decoder.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"
#include "kernels/quant_k_low.hpp"
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

// 2 bits of element j when qs[i] = i: each half h of 128 elements owns bytes
// 32h .. 32h + 31, its quarter q (32 elements) bits 2q, 2q + 1 of them.
int hand_built_crumb(int j) { return (32 * (j / 128) + j % 32) >> (2 * (j % 128 / 32)) & 3; }

TEST_CASE("Q3_K: a block built by hand") {
  // Sub-block scales (6 bits, less 32 when used) 0, 1, 2, 15, 16, 31, 32,
  // 33, 47, 48, 62, 63, 5, 40, 20, 50: the low 4 bits of scale k in the low
  // (k < 8) or high nibble of byte k % 8, the top 2 at bits 2 (k / 4), + 1
  // of byte 8 + k % 4.
  constexpr int kScales[16] = {0, 1, 2, 15, 16, 31, 32, 33, 47, 48, 62, 63, 5, 40, 20, 50};
  constexpr uint8_t kPacked[12] = {0xf0, 0x01, 0xe2, 0xff, 0x50, 0x8f, 0x40, 0x21, 0x24, 0xb4, 0x78, 0xf8};
  BlockQ3_K b{};
  b.d = 0x3400;  // 0.25
  std::copy(std::begin(kPacked), std::end(kPacked), b.scales);
  for (int i = 0; i < 64; ++i) b.qs[i] = static_cast<uint8_t>(i);
  // The third bit of element j is bit j / 32 of hmask[j % 32].
  for (int l = 0; l < 32; ++l) b.hmask[l] = l % 2 == 0 ? 0xa5 : 0x5a;

  const std::vector<float> v = dequantized(TensorType::Q3_K, &b, 256);
  // value = d * (scale - 32) * (code - 4)
  CHECK(v[0] == 0.0f);     // low 0, third bit 1 (0xa5 bit 0): code 4
  CHECK(v[1] == 24.0f);    // low 1 of qs[1], third bit 0: code 1; 0.25 * -32 * -3
  CHECK(v[37] == -7.5f);   // bits 2-3 of qs[5] = 1, bit 1 of 0x5a: code 5; scale 2: 0.25 * -30 * 1
  CHECK(v[130] == -7.5f);  // bits 0-1 of qs[34] = 2, bit 4 of 0xa5 = 0: code 2; scale 47: 0.25 * 15 * -2
  CHECK(v[200] == 13.5f);  // bits 4-5 of qs[40] = 2, bit 6 of 0xa5 = 0: code 2; scale 5: 0.25 * -27 * -2
  CHECK(v[255] == -18.0f); // bits 6-7 of qs[63] = 0, bit 7 of 0x5a = 0: code 0; scale 50: 0.25 * 18 * -4
  for (int j = 0; j < 256; ++j) {
    CAPTURE(j);
    const int third = b.hmask[j % 32] >> (j / 32) & 1;
    const int code = hand_built_crumb(j) | third << 2;
    CHECK(v[j] == 0.25f * static_cast<float>(kScales[j / 16] - 32) * static_cast<float>(code - 4));
  }
}

TEST_CASE("Q2_K: a block built by hand") {
  // Sub-block s: scale s (low nibble), min 15 - s (high nibble).
  BlockQ2_K b{};
  b.d = 0x3800;     // 0.5
  b.dmin = 0x3400;  // 0.25
  for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<uint8_t>(s | (15 - s) << 4);
  for (int i = 0; i < 64; ++i) b.qs[i] = static_cast<uint8_t>(i);
  const std::vector<float> v = dequantized(TensorType::Q2_K, &b, 256);
  // value = d * scale * code - dmin * min
  CHECK(v[0] == -3.75f);   // scale 0: -0.25 * 15
  CHECK(v[40] == -1.25f);  // bits 2-3 of qs[8] = 2, sub-block 2: 0.5 * 2 * 2 - 0.25 * 13
  CHECK(v[77] == -2.75f);  // bits 4-5 of qs[13] = 0, sub-block 4: -0.25 * 11
  CHECK(v[130] == 6.25f);  // bits 0-1 of qs[34] = 2, sub-block 8: 0.5 * 8 * 2 - 0.25 * 7
  CHECK(v[200] == 11.25f); // bits 4-5 of qs[40] = 2, sub-block 12: 0.5 * 12 * 2 - 0.25 * 3
  CHECK(v[255] == 0.0f);   // bits 6-7 of qs[63] = 0, sub-block 15: min 0
  for (int j = 0; j < 256; ++j) {
    CAPTURE(j);
    const int s = j / 16;
    CHECK(v[j] == 0.5f * static_cast<float>(s * hand_built_crumb(j)) - 0.25f * static_cast<float>(15 - s));
  }
}

// Super-blocks of different character: wide, zero, all positive, all
// negative, one sub-block far smaller than the rest, an outlier.
std::vector<float> round_trip_input() {
  std::vector<float> x = random_floats(8 * kSuperBlockElems, 5, -3.0f, 3.0f);
  const auto block = [&](int b) { return x.begin() + b * kSuperBlockElems; };
  std::fill(block(1), block(2), 0.0f);
  for (auto it = block(2); it != block(3); ++it) *it = 1.25f + *it / 4;
  for (auto it = block(3); it != block(4); ++it) *it = -1.25f + *it / 4;
  for (auto it = block(4) + 96; it != block(4) + 112; ++it) *it *= 1e-3f;
  block(5)[17] = 50.0f;
  return x;
}

// The round-trip error bound of each element. Q3_K: the ideal step s of a
// sub-block is amax / 4 and d = max(s) / 32; the stored step is within d/2
// of s, so an element is off by at most half of it where it rounds, s + 1.5d
// where it is clamped at code 7 (the element opposite the largest) and 2d
// at code 0. Q2_K: s = (max(x) - min(x, 0)) / 3 with d = max(s) / 15 and the
// min within dmin/2 of -min(x, 0), dmin = max(-min) / 15: at most
// s/2 + d/4 where it rounds, 1.5d + dmin/2 at code 3, dmin/2 at code 0.
// d and dmin are a little above the ideal because of their fp16 rounding.
std::vector<double> round_trip_tolerance(TensorType t, const std::vector<float>& x) {
  std::vector<double> tol(x.size());
  const double fp16_slack = 1.001;
  for (size_t b = 0; b < x.size() / kSuperBlockElems; ++b) {
    const float* sb = x.data() + b * kSuperBlockElems;
    double step[16];
    double max_step = 0.0, max_neg_min = 0.0;
    for (int s = 0; s < 16; ++s) {
      double lo = 0.0, hi = -INFINITY, amax = 0.0;
      for (int l = 0; l < 16; ++l) {
        const double v = sb[16 * s + l];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        amax = std::max(amax, std::fabs(v));
      }
      step[s] = t == TensorType::Q3_K ? amax / 4 : (hi - lo) / 3;
      max_step = std::max(max_step, step[s]);
      max_neg_min = std::max(max_neg_min, -lo);
    }
    for (int j = 0; j < kSuperBlockElems; ++j) {
      const double s = step[j / 16];
      double bound;
      if (t == TensorType::Q3_K) {
        const double d = max_step / 32 * fp16_slack;
        bound = s + 2 * d;
      } else {
        const double d = max_step / 15 * fp16_slack;
        const double dmin = max_neg_min / 15 * fp16_slack;
        bound = s / 2 + d / 4 + 1.5 * d + dmin / 2;
      }
      tol[b * kSuperBlockElems + j] = bound + 1e-6 * std::fabs(sb[j]);
    }
  }
  return tol;
}

TEST_CASE("Q3_K and Q2_K: quantize then dequantize stays within the format's step") {
  const std::vector<float> x = round_trip_input();
  const auto n = static_cast<int64_t>(x.size());
  for (TensorType t : {TensorType::Q3_K, TensorType::Q2_K}) {
    CAPTURE(traits_of(t).name);
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    const std::vector<float> back = dequantized(t, q.data(), n);
    expect_close(back, x, round_trip_tolerance(t, x));
    for (int j = kSuperBlockElems; j < 2 * kSuperBlockElems; ++j) CHECK(back[j] == 0.0f);
  }
}

TEST_CASE("matmul: Q3_K") {
  check_matmul_all_rows<TensorType::Q3_K, 256>();
  check_matmul_all_rows<TensorType::Q3_K, 768>();
}

TEST_CASE("matmul: Q2_K") {
  check_matmul_all_rows<TensorType::Q2_K, 256>();
  check_matmul_all_rows<TensorType::Q2_K, 768>();
}

TEST_CASE("matmul: Q3_K's and Q2_K's largest integer products") {
  // Every bit set: codes 7 and 3; Q3_K's scales 63 (31 less the offset),
  // Q2_K's scales and mins 15.
  BlockQ3_K q3;
  std::memset(&q3, 0xff, sizeof q3);
  q3.d = fp32_to_fp16(0.5f);
  check_largest_products<TensorType::Q3_K>(q3);
  BlockQ2_K q2;
  std::memset(&q2, 0xff, sizeof q2);
  q2.d = fp32_to_fp16(0.5f);
  q2.dmin = fp32_to_fp16(0.25f);
  check_largest_products<TensorType::Q2_K>(q2);
}

TEST_CASE("get_rows: Q3_K and Q2_K") {
  check_get_rows<TensorType::Q3_K, 512>();
  check_get_rows<TensorType::Q2_K, 512>();
}

}  // namespace
