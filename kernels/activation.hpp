// Element-wise kernels: the SwiGLU feed-forward gates, bias, scaling, soft-capping, softmax.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include "kernels/arch/simd.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

// The feed-forward gates: SwiGLU, gate = silu(gate) * up, and gpt-oss's
// clamped form (llama.cpp's swiglu_oai with its alpha 1.702 and limit 7):
// g = min(gate, 7), u = clamp(up, -7, 7), gate = g * sigmoid(1.702 g) * (u + 1).
enum class Glu { Silu, Clamped };

inline constexpr float kClampedGluAlpha = 1.702f;
inline constexpr float kClampedGluLimit = 7.0f;

// The gate G of one vector of gates and one of ups.
template <Glu G>
FloatVec glu(FloatVec g, FloatVec u) {
  using Vec = FloatVec;
  if constexpr (G == Glu::Silu) {
    return g / (Vec(1.0f) + xsimd::exp(-g)) * u;
  } else {
    const Vec x = xsimd::min(g, Vec(kClampedGluLimit));
    const Vec y = xsimd::clip(u, Vec(-kClampedGluLimit), Vec(kClampedGluLimit));
    return x / (Vec(1.0f) + xsimd::exp(Vec(kClampedGluAlpha) * -x)) * (y + Vec(1.0f));
  }
}

// The gate G over n values, by one thread, a vector at a time; the leftover
// values go through a zero-padded vector, so every value gets the same
// operations wherever it sits.
template <Glu G = Glu::Silu>
void swiglu_span(float* gate, const float* up, int64_t n) {
  using Vec = FloatVec;
  constexpr auto kLanes = static_cast<int64_t>(kFloatLanes);
  const int64_t n_whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < n_whole; i += kLanes)
    glu<G>(Vec::load_unaligned(gate + i), Vec::load_unaligned(up + i)).store_unaligned(gate + i);
  if (n_whole == n) return;
  alignas(64) float g[kLanes] = {};
  alignas(64) float u[kLanes] = {};
  std::copy(gate + n_whole, gate + n, g);
  std::copy(up + n_whole, up + n, u);
  glu<G>(Vec::load_aligned(g), Vec::load_aligned(u)).store_aligned(g);
  std::copy(g, g + (n - n_whole), gate + n_whole);
}

// swiglu_span over [n_tokens][N], work-shared over pieces of 64 values of a
// token (fixed pieces, so a value's result does not depend on the batch).
template <int N, Glu G = Glu::Silu>
void swiglu(float* gate, const float* up, int n_tokens) {
  constexpr int kPiece = 64;
  constexpr int kPieces = (N + kPiece - 1) / kPiece;
#pragma omp for schedule(static) nowait
  for (int64_t p = 0; p < static_cast<int64_t>(n_tokens) * kPieces; ++p) {
    const int64_t at = p / kPieces * N + p % kPieces * kPiece;
    swiglu_span<G>(gate + at, up + at, std::min<int64_t>(kPiece, N - p % kPieces * kPiece));
  }
  team_barrier();
}

// x[t] += bias for every token of x ([n_tokens][N]), work-shared over tokens.
template <int N>
void add_bias(float* x, const float* bias, int n_tokens) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t)
    for (int i = 0; i < N; ++i) x[static_cast<int64_t>(t) * N + i] += bias[i];
  team_barrier();
}

// x[t] += y[t] + bias for every token ([n_tokens][N]): a projection and its
// bias joining the residual, summed in that order, as llama.cpp's graphs
// add the bias to the projection first. Work-shared over tokens.
template <int N>
void add_biased(const float* y, const float* bias, float* x, int n_tokens) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t)
    for (int i = 0; i < N; ++i) {
      const int64_t at = static_cast<int64_t>(t) * N + i;
      x[at] += y[at] + bias[i];
    }
  team_barrier();
}

// x *= factor for every token of x ([n_tokens][N]), work-shared over tokens.
template <int N>
void scale(float* x, int n_tokens, float factor) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t)
    for (int i = 0; i < N; ++i) x[static_cast<int64_t>(t) * N + i] *= factor;
  team_barrier();
}

// x = cap * tanh(x / cap) for every token of x ([n_tokens][N]): logit soft-capping.
template <int N>
void softcap(float* x, int n_tokens, float cap) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t)
    for (int i = 0; i < N; ++i) {
      float& v = x[static_cast<int64_t>(t) * N + i];
      v = cap * std::tanh(v / cap);
    }
  team_barrier();
}

// x = softmax(x) over n > 0 values, in place, by one thread (the max is
// subtracted first so exp cannot overflow). A finite `sink` is one more
// logit that joins the max and the sum but has no value of its own (an
// attention sink, as ggml's soft_max takes it); -inf, the default, adds
// exactly nothing.
void softmax(float* x, int n, float sink = -INFINITY);

}  // namespace kiln::kernels
