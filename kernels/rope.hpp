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

// The cosines and sines of a position's angles, pos * inv_freq[i] for the
// Pairs pairs, multiplied by mscale first, as ggml does with its attn_factor
// (LongRoPE's rope.scaling.attn_factor; 1 elsewhere, which changes no bit),
// so the rotated pairs are also scaled by it. All heads, queries' and keys',
// share them.
template <int Pairs>
struct RopeAngles {
  float cos[Pairs];
  float sin[Pairs];

  RopeAngles(int position, const float* inv_freq, float mscale) {
    const auto pos = static_cast<float>(position);
    for (int i = 0; i < Pairs; ++i) {
      const float angle = pos * inv_freq[i];
      cos[i] = std::cos(angle) * mscale;
      sin[i] = std::sin(angle) * mscale;
    }
  }
};

// Turns pair i < RotDim / 2 of each of the NHeads heads of x by angle i;
// dimensions from RotDim on are left alone.
template <RopeStyle Style, int NHeads, int HeadDim, int RotDim>
void rotate_heads(float* x, const RopeAngles<RotDim / 2>& angles) {
  static_assert(RotDim % 2 == 0 && RotDim <= HeadDim);
  constexpr int kPairs = RotDim / 2;
  for (int h = 0; h < NHeads; ++h) {
    float* head = x + h * HeadDim;
    for (int i = 0; i < kPairs; ++i) {
      float& a = head[rope_first(Style, i)];
      float& b = head[rope_second(Style, i, kPairs)];
      const float x0 = a;
      const float x1 = b;
      // Each an FMA and a product, spelt out: left to the compiler, which
      // product it fuses may differ between instantiations, and so the bits.
      a = std::fma(x0, angles.cos[i], -(x1 * angles.sin[i]));
      b = std::fma(x0, angles.sin[i], x1 * angles.cos[i]);
    }
  }
}

// Rotates the queries q ([n_tokens][QHeads * HeadDim]) and the keys k
// ([n_tokens][KHeads * HeadDim]) of each token t, which sits at position
// pos0 + t, by that position's angles. Work-shared over tokens.
template <RopeStyle Style, int QHeads, int KHeads, int HeadDim, int RotDim, Sync Y = Sync::Barrier>
void rope(float* q, float* k, int n_tokens, int pos0, const float* inv_freq, float mscale) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const RopeAngles<RotDim / 2> angles(pos0 + t, inv_freq, mscale);
    rotate_heads<Style, QHeads, HeadDim, RotDim>(q + static_cast<int64_t>(t) * QHeads * HeadDim, angles);
    rotate_heads<Style, KHeads, HeadDim, RotDim>(k + static_cast<int64_t>(t) * KHeads * HeadDim, angles);
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
