#include "kernels/quant_mxfp4.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kiln::kernels {

namespace {

// The code whose scaled value is nearest to v (the first on a tie).
int nearest_code(float v, float d) {
  int best = 0;
  for (int c = 1; c < 16; ++c)
    if (std::fabs(kMxfp4Values[c] * d - v) < std::fabs(kMxfp4Values[best] * d - v)) best = c;
  return best;
}

void quantize_block(const float* x, BlockMXFP4& out) {
  float amax = 0.0f;
  for (int j = 0; j < kQuantBlockElems; ++j) amax = std::max(amax, std::fabs(x[j]));
  // floor(log2 amax) - 2 as a biased exponent, kept to E8M0's range.
  const int e = amax > 0.0f ? static_cast<int>(std::floor(std::log2(amax))) - 2 + 127 : 0;
  out.e = static_cast<uint8_t>(std::clamp(e, 0, 254));
  const float d = mxfp4_half_scale(out.e);
  for (int j = 0; j < kQuantBlockElems / 2; ++j)
    out.qs[j] = static_cast<uint8_t>(nearest_code(x[j], d) | nearest_code(x[j + 16], d) << 4);
}

}  // namespace

float mxfp4_half_scale(uint8_t e) { return std::bit_cast<float>(e8m0_bits(e)) * 0.5f; }

void quantize_row_mxfp4(const float* x, BlockMXFP4* out, int64_t n) {
  for (int64_t b = 0; b < n / kQuantBlockElems; ++b) quantize_block(x + b * kQuantBlockElems, out[b]);
}

}  // namespace kiln::kernels
