// Causal multi-head attention over the KV cache, with grouped-query heads.
// The cache holds F32 or F16 (kv_cache.hpp); F16 elements are widened in
// registers as they are read, and all arithmetic is in float.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/activation.hpp"
#include "kernels/dot.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/sync.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

namespace detail {

// out = sum_j weights[j] * v_j over j < n, v_j = v + j * stride (N elements
// of type T each). Each output vector is accumulated in kChains FMA chains
// (position j feeds chain j % kChains; the chains are added in order at the
// end), so that a small head (HeadDim 8: one vector) does not wait on one
// FMA's latency per position. The grouping depends only on j, never on the
// batch.
template <TensorType T, int N>
void weighted_sum(const float* weights, const CacheValue<T>* v, int64_t stride, int n, float* out) {
  constexpr int kLanes = kFloatLanes;
  constexpr int kVecs = N / kLanes;
  constexpr int kTail = N - kVecs * kLanes;  // elements after the whole vectors
  constexpr int kChains = kVecs >= 4 ? 1 : 4 / std::max(kVecs, 1);
  FloatVec acc[kChains][kVecs + 1];  // (+1: never zero-sized)
  float tail[kTail + 1] = {};
  for (auto& chain : acc)
    for (auto& a : chain) a = FloatVec(0.0f);
  auto accumulate = [&](int j, FloatVec (&chain)[kVecs + 1]) {
    const FloatVec w(weights[j]);
    const auto* vj = reinterpret_cast<const uint8_t*>(v + j * stride);
    for (int i = 0; i < kVecs; ++i) chain[i] = xsimd::fma(w, WeightRow<T>::load(vj, i * kLanes), chain[i]);
    for (int i = 0; i < kTail; ++i) tail[i] = std::fma(weights[j], WeightRow<T>::at(vj, kVecs * kLanes + i), tail[i]);
  };
  int j = 0;
  for (; j + kChains <= n; j += kChains)
    for (int c = 0; c < kChains; ++c) accumulate(j + c, acc[c]);
  for (int c = 0; j < n; ++j, ++c) accumulate(j, acc[c]);
  for (int i = 0; i < kVecs; ++i) {
    FloatVec sum = acc[0][i];
    for (int c = 1; c < kChains; ++c) sum += acc[c][i];
    sum.store_unaligned(out + i * kLanes);
  }
  for (int i = 0; i < kTail; ++i) out[kVecs * kLanes + i] = tail[i];
}

// out[j] = q . k_j * scale for j < n, k_j = k + j * stride (N elements of
// type T each). kFloatLanes positions at a time when N is a whole number of
// vectors: their accumulators are reduced together (sum_each, one tree
// instead of one horizontal sum each); the positions after the last whole
// group go one at a time. Which way a score is summed thus depends only on n,
// the query's position + 1, never on the batch it came in.
template <TensorType T, int N>
void scores(const float* q, const CacheValue<T>* k, int64_t stride, int n, float scale, float* out) {
  int j = 0;
  if constexpr (N % kFloatLanes == 0) {
    for (; j + kFloatLanes <= n; j += kFloatLanes) {
      FloatVec acc[kFloatLanes];
      for (int p = 0; p < kFloatLanes; ++p) {
        const auto* kp = reinterpret_cast<const uint8_t*>(k + (j + p) * stride);
        acc[p] = FloatVec::load_unaligned(q) * WeightRow<T>::load(kp, 0);
        for (int i = kFloatLanes; i < N; i += kFloatLanes)
          acc[p] = xsimd::fma(FloatVec::load_unaligned(q + i), WeightRow<T>::load(kp, i), acc[p]);
      }
      (sum_each(acc) * FloatVec(scale)).store_unaligned(out + j);  // lane p: the sum of acc[p]
    }
  }
  for (; j < n; ++j) {
    float s[1][1];
    dot_tile<T, N, 1, 1>(reinterpret_cast<const uint8_t*>(k + j * stride), q, s);
    out[j] = s[0][0] * scale;
  }
}

}  // namespace detail

// q and out are [n_tokens][NHead * HeadDim]; k_cache and v_cache are
// [position][NHeadKV * HeadDim] of KvType and already hold positions 0 .. pos0 +
// n_tokens - 1. Token t (position p = pos0 + t), head h attends to positions
// 0 .. p of kv head h / (NHead / NHeadKV):
//   out = sum_j softmax_j(q . k_j / sqrt(HeadDim)) * v_j.
// scores is scratch: one row of scores_stride >= pos0 + n_tokens floats per
// OpenMP thread. Work-shared over (token, head) pairs; a query's result does
// not depend on the rest of the batch. Sync::NoWait ends it without a barrier.
template <int NHead, int NHeadKV, int HeadDim, TensorType KvType, Sync Y = Sync::Barrier>
void attention(const float* q, const CacheValue<KvType>* k_cache, const CacheValue<KvType>* v_cache, float* out,
               int n_tokens, int pos0, float* scores, int scores_stride) {
  static_assert(NHead % NHeadKV == 0 && is_cache_type<KvType>);
  constexpr int kHeadsPerKV = NHead / NHeadKV;
  constexpr int64_t kQDim = static_cast<int64_t>(NHead) * HeadDim;
  constexpr int64_t kKVDim = static_cast<int64_t>(NHeadKV) * HeadDim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HeadDim));
  float* weights = scores + static_cast<int64_t>(omp_get_thread_num()) * scores_stride;

#pragma omp for schedule(static) nowait
  for (int pair = 0; pair < n_tokens * NHead; ++pair) {
    const int t = pair / NHead;
    const int h = pair % NHead;
    const int n_pos = pos0 + t + 1;
    const float* q_head = q + t * kQDim + h * HeadDim;
    const CacheValue<KvType>* k_head = k_cache + (h / kHeadsPerKV) * HeadDim;
    const CacheValue<KvType>* v_head = v_cache + (h / kHeadsPerKV) * HeadDim;

    detail::scores<KvType, HeadDim>(q_head, k_head, kKVDim, n_pos, scale, weights);
    softmax(weights, n_pos);

    float* out_head = out + t * kQDim + h * HeadDim;
    detail::weighted_sum<KvType, HeadDim>(weights, v_head, kKVDim, n_pos, out_head);
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
