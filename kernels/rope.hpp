// Rotary position embedding. Which two dimensions of a head form pair i is
// the architecture's choice: llama rotates adjacent pairs (2i, 2i + 1),
// qwen2 ("NEOX" in llama.cpp) the halves (i, i + RotDim / 2). Only the first
// RotDim dimensions of a head turn (partial rotary: Phi-4-mini's 96 of 128).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/sync.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

enum class RopeStyle { Adjacent, Neox };

// The dimensions of pair i (of `pairs`) in a head.
constexpr int rope_first(RopeStyle style, int i) { return style == RopeStyle::Adjacent ? 2 * i : i; }
constexpr int rope_second(RopeStyle style, int i, int pairs) {
  return style == RopeStyle::Adjacent ? 2 * i + 1 : i + pairs;
}

// out[i] = base^(-2i / rot_dim) for i < rot_dim / 2: the angle per position of
// pair i.
void rope_inv_freq(float base, int rot_dim, float* out);

// YaRN's factor for each pair's angle (out[i], i < rot_dim / 2), as ggml's
// rope_yarn computes the angle with ext_factor 1: a ramp from freq_scale
// (pairs below the one that turns beta_fast times over n_ctx_orig
// positions: interpolated) to 1 (from the one that turns beta_slow times:
// kept), linear in between. Constant per pair, so it folds into inv_freq.
void rope_yarn_factors(int rot_dim, float base, float freq_scale, int n_ctx_orig, float beta_fast, float beta_slow,
                       float* out);

// The multiplier YaRN puts on the cosines and sines, as llama.cpp makes it
// from rope.scaling.attn_factor (llama_context's yarn_attn_factor, then
// ggml's 1 + 0.1 ln(1 / freq_scale)).
float rope_yarn_mscale(float freq_scale, float attn_factor);

// Rotates token t of x ([n_tokens][NHeads * HeadDim]), which sits at
// position pos0 + t: in every head, pair i < RotDim / 2 turns by
// pos * inv_freq[i]; dimensions from RotDim on are left alone. The cosine
// and sine are multiplied by mscale first, as ggml does with its attn_factor
// (LongRoPE's rope.scaling.attn_factor; 1 elsewhere, which changes no bit),
// so the rotated pairs are also scaled by it.
template <RopeStyle Style, int NHeads, int HeadDim, int RotDim>
void rope_token(float* x, int t, int pos0, const float* inv_freq, float mscale) {
  static_assert(RotDim % 2 == 0 && RotDim <= HeadDim);
  constexpr int kPairs = RotDim / 2;
  const auto pos = static_cast<float>(pos0 + t);
  // All heads share the angles of a position.
  float cos_angle[kPairs];
  float sin_angle[kPairs];
  for (int i = 0; i < kPairs; ++i) {
    const float angle = pos * inv_freq[i];
    cos_angle[i] = std::cos(angle) * mscale;
    sin_angle[i] = std::sin(angle) * mscale;
  }
  for (int h = 0; h < NHeads; ++h) {
    float* head = x + (static_cast<int64_t>(t) * NHeads + h) * HeadDim;
    for (int i = 0; i < kPairs; ++i) {
      float& a = head[rope_first(Style, i)];
      float& b = head[rope_second(Style, i, kPairs)];
      const float x0 = a;
      const float x1 = b;
      a = x0 * cos_angle[i] - x1 * sin_angle[i];
      b = x0 * sin_angle[i] + x1 * cos_angle[i];
    }
  }
}

// rope_token for every token, work-shared over tokens.
template <RopeStyle Style, int NHeads, int HeadDim, int RotDim, Sync Y = Sync::Barrier>
void rope(float* x, int n_tokens, int pos0, const float* inv_freq, float mscale) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) rope_token<Style, NHeads, HeadDim, RotDim>(x, t, pos0, inv_freq, mscale);
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
