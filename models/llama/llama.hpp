// The `llama` architecture's layer (Llama 1-3, TinyLlama, Mistral, SmolLM,
// the llama2.c stories models): pre-norm attention with RoPE on adjacent
// pairs and grouped-query heads, then a SwiGLU feed-forward.
#pragma once

#include "models/decoder/blocks.hpp"

namespace kiln::llama {

struct Llama {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Adjacent;

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    using enum Matrix;
    auto& s = p.s;
    // Q, K and V read the same input and write separate outputs, so only the
    // last waits for the others; so do gate and up.
    const auto in = norm<attn_q, attn_k, attn_v>(p, w.attn_norm);
    matmul<attn_q, Store::Replace, Sync::NoWait>(p, w.attn_q, in, s.q);
    matmul<attn_k, Store::Replace, Sync::NoWait>(p, w.attn_k, in, s.k_new);
    matmul<attn_v>(p, w.attn_v, in, s.v_new);
    self_attention(p);
    matmul<attn_output, Store::Add>(p, w.attn_output, input<attn_output>(p, s.att), s.x);

    const auto ffn_in = norm<ffn_gate, ffn_up>(p, w.ffn_norm);
    matmul<ffn_gate, Store::Replace, Sync::NoWait>(p, w.ffn_gate, ffn_in, s.gate);
    matmul<ffn_up>(p, w.ffn_up, ffn_in, s.up);
    matmul<ffn_down, Store::Add>(p, w.ffn_down, swiglu(p), s.x);
  }
};

}  // namespace kiln::llama
