// The kernels of a mixture-of-experts feed-forward (models/decoder/moe.hpp):
// routing each token to its experts, grouping the batch's (token, expert)
// pairs by expert, gathering each pair's input row, every used expert's
// matmul over the rows routed to it, and the weighted sum of the experts'
// outputs into the residual stream.
//
// Each step computes a token's values from that token's values alone, in a
// fixed order, and the matmul's result for a row does not depend on the
// other rows it is computed with (matmul.hpp), so a token's result is the
// same bits whatever else is in the batch and whichever thread computes it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/activation.hpp"
#include "kernels/interleave.hpp"
#include "kernels/matmul.hpp"
#include "kernels/q8_activations.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

// The smallest normal fp16, below which llama.cpp's build_moe_ffn clamps the
// sum it normalizes the weights by (against dividing by zero).
inline constexpr float kExpertWeightSumFloor = 6.103515625e-5f;

// How a token's router logits become its experts' weights (llama.cpp's
// expert gating functions): Softmax, a softmax over all the experts whose K
// most probable are taken with their probabilities (Qwen3-MoE); SoftmaxTopK,
// the K largest logits taken and a softmax over those K alone (gpt-oss's
// SOFTMAX_WEIGHT).
enum class Gating { Softmax, SoftmaxTopK };

// Each token's experts: its NExperts router logits gated by G (in place:
// `logits` may become the probabilities), the K chosen in descending order
// (of equals, the lower index first) into `experts`, their weights into
// `weights`, scaled to sum to 1 when Normalize. Work-shared over tokens.
template <int NExperts, int K, bool Normalize, Gating G = Gating::Softmax>
void route_top_k(float* logits, int n_tokens, int32_t* experts, float* weights) {
  static_assert(K >= 1 && K <= NExperts);
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    float* p = logits + static_cast<int64_t>(t) * NExperts;
    int32_t* ids = experts + static_cast<int64_t>(t) * K;
    float* w = weights + static_cast<int64_t>(t) * K;
    if constexpr (G == Gating::Softmax) softmax(p, NExperts);
    bool taken[NExperts] = {};
    for (int i = 0; i < K; ++i) {
      int best = 0;
      while (taken[best]) ++best;
      for (int e = best + 1; e < NExperts; ++e)
        if (!taken[e] && p[e] > p[best]) best = e;
      taken[best] = true;
      ids[i] = best;
      w[i] = p[best];
    }
    if constexpr (G == Gating::SoftmaxTopK) softmax(w, K);
    if constexpr (Normalize) {
      float sum = 0.0f;
      for (int i = 0; i < K; ++i) sum += w[i];
      sum = std::max(sum, kExpertWeightSumFloor);
      for (int i = 0; i < K; ++i) w[i] /= sum;
    }
  }
  team_barrier();
}

// The batch's n_tokens x K (token, slot) pairs grouped by expert: rows
// [first[e], first[e + 1]) are expert e's, in token order; row_of[t * K + i]
// is the row of token t's slot i, token_of[r] the token of row r. The first
// thread counts (a few thousand pairs at most), the others wait for it.
template <int NExperts, int K>
void group_by_expert(const int32_t* experts, int n_tokens, int32_t* first, int32_t* row_of, int32_t* token_of) {
  if (omp_get_thread_num() == 0) {
    const int pairs = n_tokens * K;
    int32_t next[NExperts] = {};
    for (int j = 0; j < pairs; ++j) ++next[experts[j]];
    first[0] = 0;
    for (int e = 0; e < NExperts; ++e) {
      first[e + 1] = first[e] + next[e];
      next[e] = first[e];
    }
    for (int j = 0; j < pairs; ++j) {
      const int32_t row = next[experts[j]]++;
      row_of[j] = row;
      token_of[row] = j / K;
    }
  }
  team_barrier();
}

// Row r of the output = row token_of[r] of `in` (Cols values), for n_rows
// rows: as floats when Float, as its Q8 rounding when Q8 (the forms the
// experts' matrices read). Work-shared over rows.
template <int Cols, bool Float, bool Q8>
void gather_rows(MatmulInput in, const int32_t* token_of, int n_rows, float* out, Q8Out out_q8) {
  static_assert(!Q8 || Cols % kQuantBlockElems == 0);
#pragma omp for schedule(static) nowait
  for (int r = 0; r < n_rows; ++r) {
    const int64_t from = static_cast<int64_t>(token_of[r]) * Cols, to = static_cast<int64_t>(r) * Cols;
    if constexpr (Float) std::memcpy(out + to, in.f + from, Cols * sizeof(float));
    if constexpr (Q8) {
      std::memcpy(out_q8.qs + to, in.q8.qs + from, Cols);
      std::memcpy(out_q8.d + to / kQuantBlockElems, in.q8.d + from / kQuantBlockElems,
                  Cols / kQuantBlockElems * sizeof(float));
      std::memcpy(out_q8.sum + to / kQ8HalfElems, in.q8.sum + from / kQ8HalfElems, Cols / kQ8HalfElems * sizeof(int32_t));
      std::memcpy(out_q8.scaled_sum + to / kQuantBlockElems * kQ8ScaledSums,
                  in.q8.scaled_sum + from / kQuantBlockElems * kQ8ScaledSums,
                  Cols / kQuantBlockElems * kQ8ScaledSums * sizeof(float));
    }
  }
  team_barrier();
}

// out = W_e in for the rows of each expert e, [first[e], first[e + 1]), where
// W_e is the e-th of the NExperts Rows x Cols matrices that `w` holds back
// to back (matmul_matrix_bytes each): each expert's matrix is read once for
// all its rows, and an expert no row is routed to is not read. The experts
// write different rows, so only the last one waits (Sync::Barrier).
template <TensorType T, int NExperts, int Rows, int Cols, Sync Y = Sync::Barrier>
void expert_matmul(const void* w, const MatmulInput& in, const int32_t* first, float* out) {
  constexpr int64_t kMatrixBytes = matmul_matrix_bytes(T, Rows, Cols);
  const auto* matrices = static_cast<const uint8_t*>(w);
  for (int e = 0; e < NExperts; ++e) {
    const int n = first[e + 1] - first[e];
    if (n == 0) continue;
    matmul<T, Rows, Cols, Store::Replace, Sync::NoWait>(matrices + e * kMatrixBytes, in.from_token<Cols>(first[e]),
                                                         out + static_cast<int64_t>(first[e]) * Rows, n);
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

// rows[r] += bias[e] (Cols values) for the rows of each expert e, [first[e],
// first[e + 1]): the experts' biases (gpt-oss), NExperts vectors back to
// back. Work-shared over rows.
template <int NExperts, int Cols>
void add_expert_bias(float* rows, const float* bias, const int32_t* first) {
  const int n_rows = first[NExperts];
#pragma omp for schedule(static) nowait
  for (int r = 0; r < n_rows; ++r) {
    const int e = static_cast<int>(std::upper_bound(first, first + NExperts + 1, r) - first) - 1;
    const float* b = bias + static_cast<int64_t>(e) * Cols;
    float* row = rows + static_cast<int64_t>(r) * Cols;
    for (int j = 0; j < Cols; ++j) row[j] += b[j];
  }
  team_barrier();
}

// x[t] += sum over slots i of weights[t][i] * rows[row_of[t][i]] (Cols
// values): the weighted experts' outputs summed slot by slot, then added to
// the residual, in llama.cpp's order. With Shared, a shared expert's output
// (Qwen2-MoE: shared[t], scaled by the sigmoid of shared_logit[t]) joins
// that sum before the residual, as llama.cpp adds it. Work-shared over tokens.
template <int Cols, int K, bool Shared = false>
void add_experts(const float* rows, const int32_t* row_of, const float* weights, float* x, int n_tokens,
                 const float* shared = nullptr, const float* shared_logit = nullptr) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const float* row[K];
    float w[K];
    for (int i = 0; i < K; ++i) {
      row[i] = rows + static_cast<int64_t>(row_of[t * K + i]) * Cols;
      w[i] = weights[t * K + i];
    }
    float* out = x + static_cast<int64_t>(t) * Cols;
    const float* shared_row = Shared ? shared + static_cast<int64_t>(t) * Cols : nullptr;
    const float shared_scale = Shared ? 1.0f / (1.0f + std::exp(-shared_logit[t])) : 0.0f;
    for (int j = 0; j < Cols; ++j) {
      float sum = w[0] * row[0][j];
      for (int i = 1; i < K; ++i) sum += w[i] * row[i][j];
      if constexpr (Shared) sum += shared_scale * shared_row[j];
      out[j] += sum;
    }
  }
  team_barrier();
}

}  // namespace kiln::kernels
