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

  Vec vmax = Vec::load_aligned(tail);
  for (int i = 0; i < n_whole; i += kLanes) vmax = xsimd::max(vmax, Vec::load_unaligned(x + i));
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
