// The index of the largest value: greedy decoding's pick, over a whole vocabulary each token.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/arch/simd.hpp"

namespace kiln::kernels {

// The index of the largest of x[0..n), n >= 1, and the lowest index on ties,
// as a loop keeping the first value strictly greater than the best so far:
// NaNs are passed over, and a NaN at 0 is the answer. In two vector passes,
// the largest value and then its first index, rather than one loop whose
// every compare waits for the one before.
inline int64_t argmax(const float* x, int64_t n) {
  if (std::isnan(x[0])) return 0;
  using Vec = FloatVec;
  constexpr int64_t kLanes = kFloatLanes;
  const int64_t n_whole = n / kLanes * kLanes;
  Vec best_lanes(x[0]);
  for (int64_t i = 0; i < n_whole; i += kLanes) {
    const Vec v = Vec::load_unaligned(x + i);
    best_lanes = xsimd::select(v > best_lanes, v, best_lanes);
  }
  alignas(64) float lanes[kLanes];
  best_lanes.store_aligned(lanes);
  float best = x[0];
  for (const float lane : lanes) best = lane > best ? lane : best;
  for (int64_t i = n_whole; i < n; ++i) best = x[i] > best ? x[i] : best;
  int64_t from = 0;
  while (from < n_whole && !xsimd::any(Vec::load_unaligned(x + from) == Vec(best))) from += kLanes;
  while (x[from] != best) ++from;
  return from;
}

}  // namespace kiln::kernels
