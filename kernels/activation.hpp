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

// The gate G over n values, by one thread: whole vectors with xsimd's exp,
// the leftover values with std::exp.
template <Glu G = Glu::Silu>
void swiglu_span(float* gate, const float* up, int64_t n) {
  using Vec = FloatVec;
  constexpr auto kLanes = static_cast<int64_t>(kFloatLanes);
  const int64_t n_whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < n_whole; i += kLanes) {
    const Vec g = Vec::load_unaligned(gate + i);
    if constexpr (G == Glu::Silu) {
      (g / (Vec(1.0f) + xsimd::exp(-g)) * Vec::load_unaligned(up + i)).store_unaligned(gate + i);
    } else {
      const Vec x = xsimd::min(g, Vec(kClampedGluLimit));
      const Vec y = xsimd::clip(Vec::load_unaligned(up + i), Vec(-kClampedGluLimit), Vec(kClampedGluLimit));
      (x / (Vec(1.0f) + xsimd::exp(Vec(kClampedGluAlpha) * -x)) * (y + Vec(1.0f))).store_unaligned(gate + i);
    }
  }
  for (int64_t i = n_whole; i < n; ++i) {
    if constexpr (G == Glu::Silu) {
      gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    } else {
      const float x = std::min(gate[i], kClampedGluLimit);
      const float y = std::clamp(up[i], -kClampedGluLimit, kClampedGluLimit);
      gate[i] = x / (1.0f + std::exp(kClampedGluAlpha * -x)) * (y + 1.0f);
    }
  }
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
