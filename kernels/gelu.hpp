// GELU in its tanh form, as ggml computes it on CPUs: the input rounded to
// F16 and looked up in a table of every F16 value's GELU, itself rounded to
// F16; below -10 the result is 0, from 10 on the input itself. Matching that
// rounding keeps a Gemma model's feed-forward within an F16 step of
// llama.cpp's instead of drifting by it at every layer.
#pragma once

#include <cstdint>

#include "kernels/team.hpp"

namespace kiln::kernels {

// gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in float.
float gelu_tanh(float x);

// gelu_tanh as ggml's table gives it (see above).
float gelu_rounded(float x);

// gate = gelu_rounded(gate) * up for n values.
void geglu_span(float* gate, const float* up, int64_t n);

// geglu_span over [n_tokens][N], work-shared over tokens.
template <int N>
void geglu(float* gate, const float* up, int n_tokens) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) geglu_span(gate + static_cast<int64_t>(t) * N, up + static_cast<int64_t>(t) * N, N);
  team_barrier();
}

}  // namespace kiln::kernels
