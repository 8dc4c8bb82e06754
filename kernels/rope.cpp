#include "kernels/rope.hpp"

#include <algorithm>

namespace kiln::kernels {

void rope_inv_freq(float base, int rot_dim, float* out) {
  for (int i = 0; i < rot_dim / 2; ++i)
    out[i] = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(rot_dim));
}

namespace {

// The pair index whose angle turns `turns` times over n_ctx_orig positions
// (ggml's ggml_rope_yarn_corr_dim).
float yarn_pair(int rot_dim, int n_ctx_orig, float turns, float base) {
  constexpr float kPi = 3.14159265358979323846f;
  return static_cast<float>(rot_dim) * std::log(static_cast<float>(n_ctx_orig) / (turns * 2 * kPi)) /
         (2 * std::log(base));
}

}  // namespace

void rope_yarn_factors(int rot_dim, float base, float freq_scale, int n_ctx_orig, float beta_fast, float beta_slow,
                       float* out) {
  const float low = std::max(0.0f, std::floor(yarn_pair(rot_dim, n_ctx_orig, beta_fast, base)));
  const float high =
      std::min(static_cast<float>(rot_dim - 1), std::ceil(yarn_pair(rot_dim, n_ctx_orig, beta_slow, base)));
  for (int i = 0; i < rot_dim / 2; ++i) {
    const float y = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
    const float kept = 1 - std::min(1.0f, std::max(0.0f, y));
    out[i] = freq_scale * (1 - kept) + kept;
  }
}

float rope_yarn_mscale(float freq_scale, float attn_factor) {
  const float factor = 1.0f / freq_scale;
  const float mscale = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;
  const float yarn_attn_factor = mscale * (1.0f / (1.0f + 0.1f * std::log(factor))) * attn_factor;
  return yarn_attn_factor * (1.0f + 0.1f * std::log(1.0f / freq_scale));
}

}  // namespace kiln::kernels
