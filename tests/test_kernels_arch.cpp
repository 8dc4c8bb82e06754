// The instruction-set layer (kernels/arch/simd.hpp): every widening and
// rounding of a vector gives, lane for lane, the bits of the scalar
// conversion, whatever the vector's width on this build.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/arch/simd.hpp"
#include "kernels/bf16.hpp"
#include "kernels/fp16.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln::kernels;

namespace {

std::vector<float> lanes_of(FloatVec v) {
  std::vector<float> out(kFloatLanes);
  v.store_unaligned(out.data());
  return out;
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

TEST_CASE("arch: widen_f16 and widen_bf16 match the scalar conversions on every 16-bit value") {
  std::vector<uint16_t> all(65536 + kFloatLanes);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  int mismatches = 0;
  for (size_t at = 0; at < 65536; at += kFloatLanes) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(all.data() + at);
    const std::vector<float> f16 = lanes_of(widen_f16(bytes));
    const std::vector<float> bf16 = lanes_of(widen_bf16(bytes));
    for (int i = 0; i < kFloatLanes; ++i) {
      if (!same_bits(f16[i], fp16_to_fp32(all[at + i]))) ++mismatches;
      if (!same_bits(bf16[i], bf16_to_fp32(all[at + i]))) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("arch: widen_bytes, signed and unsigned, on every byte") {
  std::vector<uint8_t> all(256 + kFloatLanes);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i);
  for (int at = 0; at < 256; at += kFloatLanes) {
    const std::vector<float> u = lanes_of(widen_bytes<false>(all.data() + at));
    const std::vector<float> s = lanes_of(widen_bytes<true>(all.data() + at));
    for (int i = 0; i < kFloatLanes; ++i) {
      CHECK(u[i] == static_cast<float>(all[at + i]));
      CHECK(s[i] == static_cast<float>(static_cast<int8_t>(all[at + i])));
    }
  }
}

TEST_CASE("arch: narrow_f16 rounds each lane as fp32_to_fp16") {
  std::vector<float> values = kiln::test::random_floats(4096, 11, -70000.0f, 70000.0f);
  for (float special : {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 1e-8f, 6e-8f, 3e-8f, 1.0009765625f, 1.00048828125f,
                        std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::denorm_min()})
    values.push_back(special);
  while (values.size() % kFloatLanes != 0) values.push_back(0.5f);
  for (size_t at = 0; at < values.size(); at += kFloatLanes) {
    uint16_t out[kFloatLanes];
    narrow_f16(values.data() + at, out);
    for (int i = 0; i < kFloatLanes; ++i) CHECK(out[i] == fp32_to_fp16(values[at + i]));
  }
}

TEST_CASE("arch: sum_each puts the sum of vector p in lane p") {
  FloatVec acc[kFloatLanes];
  for (int p = 0; p < kFloatLanes; ++p) {
    float lanes[kFloatLanes];
    for (int i = 0; i < kFloatLanes; ++i) lanes[i] = static_cast<float>(p * 1000 + i * (p + 1));  // exact sums
    acc[p] = FloatVec::load_unaligned(lanes);
  }
  const std::vector<float> sums = lanes_of(sum_each(acc));
  for (int p = 0; p < kFloatLanes; ++p) {
    float expected = 0.0f;
    for (int i = 0; i < kFloatLanes; ++i) expected += static_cast<float>(p * 1000 + i * (p + 1));
    CHECK(sums[p] == expected);
  }
}

TEST_CASE("arch: max_each puts the largest lane of vector p in lane p") {
  for (int largest_at = 0; largest_at < kFloatLanes; ++largest_at) {  // wherever the largest lane is
    FloatVec acc[kFloatLanes];
    for (int p = 0; p < kFloatLanes; ++p) {
      float lanes[kFloatLanes];
      for (int i = 0; i < kFloatLanes; ++i) lanes[i] = static_cast<float>(-p - i);
      lanes[(largest_at + p) % kFloatLanes] = static_cast<float>(100 + p);
      acc[p] = FloatVec::load_unaligned(lanes);
    }
    const std::vector<float> largest = lanes_of(max_each(acc));
    for (int p = 0; p < kFloatLanes; ++p) CHECK(largest[p] == static_cast<float>(100 + p));
  }
}

}  // namespace
