// Element-wise kernels: the SwiGLU feed-forward gate, residual add, softmax.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::kernels {

// gate = silu(gate) * up over [n_tokens][N], silu(g) = g / (1 + e^-g).
template <int N>
void swiglu(float* gate, const float* up, int n_tokens) {
  const int64_t n = static_cast<int64_t>(n_tokens) * N;
#pragma omp for schedule(static)
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// Residual connection: x += y over [n_tokens][N].
template <int N>
void add(float* x, const float* y, int n_tokens) {
  const int64_t n = static_cast<int64_t>(n_tokens) * N;
#pragma omp for schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

// x = softmax(x) over n > 0 values, in place, by one thread (the max is
// subtracted first so exp cannot overflow).
void softmax(float* x, int n);

}  // namespace kiln::kernels
