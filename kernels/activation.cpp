#include "kernels/activation.hpp"

#include <algorithm>
#include <cmath>
#include "kernels/arch/simd.hpp"

namespace kiln::kernels {

// Vectorized throughout: the last, partial vector is padded with -inf, whose
// exp is 0 and adds nothing to the sum.
void softmax(float* x, int n, float sink) {
  using Vec = FloatVec;
  constexpr int kLanes = kFloatLanes;
  const int n_whole = n / kLanes * kLanes;
  alignas(Vec::arch_type::alignment()) float tail[kLanes];
  std::fill(tail, tail + kLanes, -INFINITY);
  std::copy(x + n_whole, x + n, tail);

  // Four independent chains of maxima (a maximum is exact, so their order
  // changes nothing), so that the loop does not wait on each one's latency.
  Vec maxima[4] = {Vec::load_aligned(tail), Vec(-INFINITY), Vec(-INFINITY), Vec(-INFINITY)};
  int at = 0;
  for (; at + 4 * kLanes <= n_whole; at += 4 * kLanes)
    for (int c = 0; c < 4; ++c) maxima[c] = xsimd::max(maxima[c], Vec::load_unaligned(x + at + c * kLanes));
  for (; at < n_whole; at += kLanes) maxima[0] = xsimd::max(maxima[0], Vec::load_unaligned(x + at));
  const Vec vmax = xsimd::max(xsimd::max(maxima[0], maxima[1]), xsimd::max(maxima[2], maxima[3]));
  alignas(Vec::arch_type::alignment()) float lane_max[kLanes];
  vmax.store_aligned(lane_max);
  const float max_value = std::max(*std::max_element(lane_max, lane_max + kLanes), sink);
  const Vec max(max_value);

  Vec sum(0.0f);
  for (int i = 0; i < n_whole; i += kLanes) {
    const Vec e = xsimd::exp(Vec::load_unaligned(x + i) - max);
    e.store_unaligned(x + i);
    sum += e;
  }
  const Vec e_tail = xsimd::exp(Vec::load_aligned(tail) - max);
  e_tail.store_aligned(tail);
  std::copy(tail, tail + (n - n_whole), x + n_whole);
  sum += e_tail;

  const float inv_sum = 1.0f / (xsimd::hadd(sum) + std::exp(sink - max_value));
  for (int i = 0; i < n; ++i) x[i] *= inv_sum;
}

}  // namespace kiln::kernels
