// The `gpt-oss` architecture's layer (OpenAI's gpt-oss-20b and -120b;
// llama.cpp's LLM_ARCH_OPENAI_MOE), as llama.cpp's graph computes it:
// biased Q, K and V, RoPE on halves with YaRN scaling (folded into the angle
// tables at load), attention with a learned sink logit per head, every other
// layer over a sliding window (the layer list says which), a biased output
// projection; then post_attention_norm, in place of ffn_norm, before a
// mixture of experts whose router and experts have biases, routed by a
// softmax over the chosen experts' logits, with a clamped SwiGLU.
#pragma once

#include "models/decoder/moe.hpp"

namespace kiln::gpt_oss {

struct GptOss {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;
  static constexpr decoder::MoeStyle moe = {
      .gating = kernels::Gating::SoftmaxTopK, .biases = true, .glu = kernels::Glu::Clamped};

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    auto& s = p.s;
    qkv(p, w);
    add_bias(p, s.q, w.attn_q_bias);
    add_bias(p, s.k_new, w.attn_k_bias);
    add_bias(p, s.v_new, w.attn_v_bias);
    self_attention(p, w.attn_sinks);
    // The bias joins the projection before the residual, as in llama.cpp.
    attention_output<Store::Replace>(p, w, s.xn);
    add_biased(p, s.xn, w.attn_output_bias);
    moe_ffn<moe>(p, w, w.attn_post_norm);
  }
};

}  // namespace kiln::gpt_oss
