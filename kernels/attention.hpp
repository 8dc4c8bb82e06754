// Causal multi-head attention over the KV cache, with grouped-query heads.
#pragma once

#include <omp.h>

#include <cmath>
#include <cstdint>

#include "kernels/activation.hpp"
#include "kernels/dot.hpp"

namespace kiln::kernels {

namespace detail {

// y += a * x for N floats.
template <int N>
void add_scaled(float a, const float* x, float* y) {
  constexpr int kLanes = static_cast<int>(FloatVec::size);
  const FloatVec va(a);
  int i = 0;
  for (; i + kLanes <= N; i += kLanes)
    xsimd::fma(va, FloatVec::load_unaligned(x + i), FloatVec::load_unaligned(y + i)).store_unaligned(y + i);
  for (; i < N; ++i) y[i] = std::fma(a, x[i], y[i]);
}

}  // namespace detail

// q and out are [n_tokens][NHead * HeadDim]; k_cache and v_cache are
// [position][NHeadKV * HeadDim] and already hold positions 0 .. pos0 +
// n_tokens - 1. Token t (position p = pos0 + t), head h attends to positions
// 0 .. p of kv head h / (NHead / NHeadKV):
//   out = sum_j softmax_j(q . k_j / sqrt(HeadDim)) * v_j.
// scores is scratch: one row of scores_stride >= pos0 + n_tokens floats per
// OpenMP thread. Work-shared over (token, head) pairs; a query's result does
// not depend on the rest of the batch.
template <int NHead, int NHeadKV, int HeadDim>
void attention(const float* q, const float* k_cache, const float* v_cache, float* out, int n_tokens, int pos0,
               float* scores, int scores_stride) {
  static_assert(NHead % NHeadKV == 0);
  constexpr int kHeadsPerKV = NHead / NHeadKV;
  constexpr int64_t kQDim = static_cast<int64_t>(NHead) * HeadDim;
  constexpr int64_t kKVDim = static_cast<int64_t>(NHeadKV) * HeadDim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HeadDim));
  float* weights = scores + static_cast<int64_t>(omp_get_thread_num()) * scores_stride;

#pragma omp for schedule(static)
  for (int pair = 0; pair < n_tokens * NHead; ++pair) {
    const int t = pair / NHead;
    const int h = pair % NHead;
    const int n_pos = pos0 + t + 1;
    const float* q_head = q + t * kQDim + h * HeadDim;
    const float* k_head = k_cache + (h / kHeadsPerKV) * HeadDim;
    const float* v_head = v_cache + (h / kHeadsPerKV) * HeadDim;

    for (int j = 0; j < n_pos; ++j) weights[j] = dot<HeadDim>(q_head, k_head + j * kKVDim) * scale;
    softmax(weights, n_pos);

    float* out_head = out + t * kQDim + h * HeadDim;
    for (int i = 0; i < HeadDim; ++i) out_head[i] = 0.0f;
    for (int j = 0; j < n_pos; ++j) detail::add_scaled<HeadDim>(weights[j], v_head + j * kKVDim, out_head);
  }
}

}  // namespace kiln::kernels
