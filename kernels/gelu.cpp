#include "kernels/gelu.hpp"

#include <array>
#include <cmath>

#include "kernels/fp16.hpp"

namespace kiln::kernels {

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

namespace {

// Every F16 value's GELU, rounded to F16 (128 KiB, built on first use).
const std::array<uint16_t, 65536>& gelu_table() {
  static const auto table = [] {
    std::array<uint16_t, 65536> t{};
    for (uint32_t h = 0; h < t.size(); ++h) t[h] = fp32_to_fp16(gelu_tanh(fp16_to_fp32(static_cast<uint16_t>(h))));
    return t;
  }();
  return table;
}

}  // namespace

float gelu_rounded(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return fp16_to_fp32(gelu_table()[fp32_to_fp16(x)]);
}

void geglu_span(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gelu_rounded(gate[i]) * up[i];
}

}  // namespace kiln::kernels
