// RMS normalization.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::kernels {

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight for each token's N values.
// out may be x. The sum of squares is a plain sequential float sum, like
// llama2.c's reference. Work-shared over tokens.
template <int N>
void rmsnorm(const float* x, const float* weight, float* out, int n_tokens, float eps) {
#pragma omp for schedule(static)
  for (int t = 0; t < n_tokens; ++t) {
    const float* xt = x + static_cast<int64_t>(t) * N;
    float* out_t = out + static_cast<int64_t>(t) * N;
    float sum_sq = 0.0f;
    for (int i = 0; i < N; ++i) sum_sq += xt[i] * xt[i];
    const float scale = 1.0f / std::sqrt(sum_sq / static_cast<float>(N) + eps);
    for (int i = 0; i < N; ++i) out_t[i] = weight[i] * (scale * xt[i]);
  }
}

}  // namespace kiln::kernels
