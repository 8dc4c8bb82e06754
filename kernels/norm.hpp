// RMS normalization.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/team.hpp"

namespace kiln::kernels {

// out = x / sqrt(mean(x^2) + eps) * weight for one token's N values; out may
// be x. The squares are summed in double and the mean rounded to float, as
// ggml does: the normalized values then match llama.cpp's to the bit, which
// matters where they are rounded to 8 bits next (q8_activations.hpp).
template <int N>
void rmsnorm_row(const float* x, const float* weight, float* out, float eps) {
  double sum_sq = 0.0;
  for (int i = 0; i < N; ++i) sum_sq += x[i] * x[i];
  const auto mean = static_cast<float>(sum_sq / N);
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int i = 0; i < N; ++i) out[i] = weight[i] * (scale * x[i]);
}

// rmsnorm_row for each of n_tokens tokens, work-shared over tokens.
template <int N>
void rmsnorm(const float* x, const float* weight, float* out, int n_tokens, float eps) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * N;
    rmsnorm_row<N>(x + at, weight, out + at, eps);
  }
  team_barrier();
}

// x += rmsnorm_row(y) * weight for each of n_tokens tokens: a block's
// output through its post-norm added to the residual stream (Gemma).
template <int N>
void rmsnorm_add(const float* y, const float* weight, float* x, int n_tokens, float eps) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * N;
    float normalized[N];
    rmsnorm_row<N>(y + at, weight, normalized, eps);
    for (int i = 0; i < N; ++i) x[at + i] += normalized[i];
  }
  team_barrier();
}

}  // namespace kiln::kernels
