// MXFP4: blocks built by hand from the format (E8M0 scale, E2M1 values),
// quantization against ggml's rule, the integer matmul against the scalar
// reference over odd sizes (and the portable integer code bit for bit), the
// largest and smallest scales, and get_rows against the reference decoder.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/quant.hpp"
#include "kernels/quant_mxfp4.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

std::vector<float> dequantized(const void* data, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(TensorType::MXFP4, data, out.data(), n);
  return out;
}

// E2M1's 16 values, written out here from the format: sign bit, then 0, 0.5,
// 1, 1.5, 2, 3, 4, 6.
constexpr float kE2M1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};

TEST_CASE("MXFP4: a block built by hand") {
  BlockMXFP4 b{};
  b.e = 128;  // 2^1
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const std::vector<float> v = dequantized(&b, 32);
  CHECK(v[0] == 0.0f);
  CHECK(v[3] == 3.0f);     // code 3: 1.5
  CHECK(v[7] == 12.0f);    // code 7: 6
  CHECK(v[15] == -12.0f);  // code 15: -6
  CHECK(v[16] == -12.0f);  // high nibble 15 of byte 0
  CHECK(v[30] == 1.0f);    // high nibble 1 of byte 14
  for (int j = 0; j < 32; ++j) {
    CAPTURE(j);
    CHECK(v[j] == 2.0f * kE2M1[j < 16 ? j : 31 - j]);
  }
}

TEST_CASE("MXFP4: every exponent, the subnormal ones included") {
  BlockMXFP4 b{};
  std::memset(b.qs, 0x22, sizeof b.qs);  // code 2 everywhere: 1.0
  for (int e = 0; e < 255; ++e) {
    CAPTURE(e);
    b.e = static_cast<uint8_t>(e);
    const std::vector<float> v = dequantized(&b, 32);
    CHECK(v[0] == std::ldexp(1.0f, e - 127));
    CHECK(v == reference_dequantize(static_cast<uint32_t>(TensorType::MXFP4), reinterpret_cast<uint8_t*>(&b), 32));
  }
}

// ggml's rule: the scale 2^(floor(log2 max|x|) - 2) puts the largest
// magnitude in [4, 8) units, where 6 is the largest value; each element
// then takes the nearest value, so the error is at most half a step (a
// unit for the values from 4 on) or the saturation past 6.
TEST_CASE("MXFP4: quantized values are the nearest the scale allows") {
  constexpr int kN = 8 * 32;
  std::vector<float> x = random_floats(kN, 5, -3.0f, 3.0f);
  std::fill(x.begin() + 32, x.begin() + 64, 0.0f);   // an all-zero block stays zero
  for (int j = 64; j < 96; ++j) x[j] *= 1e-3f;       // a small block gets its own scale
  std::vector<BlockMXFP4> q(kN / 32);
  quantize_row(TensorType::MXFP4, x.data(), q.data(), kN);
  const std::vector<float> back = dequantized(q.data(), kN);
  for (int b = 0; b < kN / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    CAPTURE(b);
    if (amax == 0) {
      CHECK(q[b].e == 0);
      continue;
    }
    const float unit = std::ldexp(1.0f, static_cast<int>(std::floor(std::log2(amax))) - 2);
    CHECK(q[b].e == static_cast<int>(std::floor(std::log2(amax))) - 2 + 127);
    for (int j = b * 32; j < b * 32 + 32; ++j) {
      double nearest = INFINITY;
      for (float c : kE2M1) nearest = std::min(nearest, std::fabs(static_cast<double>(unit) * c - x[j]));
      if (std::fabs(back[j] - x[j]) > nearest * (1 + 1e-6)) FAIL_CHECK("element " << j << ": " << back[j]);
    }
  }
  for (int j = 32; j < 64; ++j) CHECK(back[j] == 0.0f);
}

TEST_CASE("matmul: MXFP4") {
  check_matmul_all_rows<TensorType::MXFP4, 32>();
  check_matmul_all_rows<TensorType::MXFP4, 96>();
  check_matmul_all_rows<TensorType::MXFP4, 288>();
}

TEST_CASE("matmul: MXFP4's largest integer products, at the largest and smallest scales") {
  // Codes 7 (+6) and 15 (-6) everywhere. Exponents 0 (2^-127, subnormal)
  // and 254 only meet a product below float's range or far within it.
  for (uint8_t nibbles : {0x77, 0xff}) {
    for (uint8_t e : {0, 100, 127, 150}) {
      CAPTURE(int{e});
      BlockMXFP4 b;
      std::memset(&b, nibbles, sizeof b);
      b.e = e;
      check_largest_products<TensorType::MXFP4>(b);
    }
  }
}

TEST_CASE("get_rows: MXFP4") { check_get_rows<TensorType::MXFP4, 96>(); }

}  // namespace
