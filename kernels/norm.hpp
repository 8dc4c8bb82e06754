// RMS normalization.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/team.hpp"

namespace kiln::kernels {

// The mean of the squares of N values. The float squares are summed in
// double and the mean rounded to float, as ggml does, so the normalized values
// match llama.cpp's, which matters where they are rounded to 8 bits next
// (q8_activations.hpp). ggml adds them in one chain; here value i goes to
// sum i % 8 (eight independent chains, in a fixed order on every
// instruction set, so that a short row does not wait on one add's latency
// per value). The two orders give the same double when every addition is
// exact (the squares within a factor 2^(29 - log2 N) of each other);
// otherwise the doubles differ in their last bits, which reach the float mean
// only when it lies that close to a float's rounding midpoint.
template <int N>
float mean_square(const float* x) {
  constexpr int kChains = 8;
  double sums[kChains] = {};
  for (int i = 0; i + kChains <= N; i += kChains)
    for (int c = 0; c < kChains; ++c) sums[c] += static_cast<double>(x[i + c] * x[i + c]);
  constexpr int kTail = N / kChains * kChains;
  for (int i = kTail; i < N; ++i) sums[i - kTail] += static_cast<double>(x[i] * x[i]);
  const double sum = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
  return static_cast<float>(sum / N);
}

// out = x / sqrt(mean(x^2) + eps) * weight for one token's N values; out may be x.
template <int N>
void rmsnorm_row(const float* x, const float* weight, float* out, float eps) {
  const float scale = 1.0f / std::sqrt(mean_square<N>(x) + eps);
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
