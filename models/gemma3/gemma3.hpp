// The `gemma3` architecture's layer (Gemma 3 text models): embeddings scaled
// by sqrt(n_embd); Q and K normalized per head; the attention's and the
// feed-forward's outputs each normalized again (post-norms) before they join
// the residual stream; a GELU-gated feed-forward; most layers attend to a
// sliding window with their own RoPE base (the layer list says which).
#pragma once

#include <cmath>

#include "models/decoder/blocks.hpp"

namespace kiln::gemma3 {

struct Gemma3 {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;

  static float embedding_scale(int n_embd) { return std::sqrt(static_cast<float>(n_embd)); }

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    using enum Matrix;
    auto& s = p.s;
    const auto in = norm<attn_q, attn_k, attn_v>(p, w.attn_norm);
    matmul<attn_q, Store::Replace, Sync::NoWait>(p, w.attn_q, in, s.q);
    matmul<attn_k, Store::Replace, Sync::NoWait>(p, w.attn_k, in, s.k_new);
    matmul<attn_v>(p, w.attn_v, in, s.v_new);
    head_norm(p, s.q, w.attn_q_norm);
    head_norm(p, s.k_new, w.attn_k_norm);
    self_attention(p);
    matmul<attn_output>(p, w.attn_output, input<attn_output>(p, s.att), s.xn);
    add_normalized(p, s.xn, w.attn_post_norm);

    const auto ffn_in = norm<ffn_gate, ffn_up>(p, w.ffn_norm);
    matmul<ffn_gate, Store::Replace, Sync::NoWait>(p, w.ffn_gate, ffn_in, s.gate);
    matmul<ffn_up>(p, w.ffn_up, ffn_in, s.up);
    matmul<ffn_down>(p, w.ffn_down, geglu(p), s.xn);
    add_normalized(p, s.xn, w.ffn_post_norm);
  }
};

}  // namespace kiln::gemma3
