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
    auto& s = p.s;
    qkv(p, w);
    head_norm(p, s.q, w.attn_q_norm);
    head_norm(p, s.k_new, w.attn_k_norm);
    self_attention(p);
    attention_output<Store::Replace>(p, w, s.xn);
    add_normalized(p, s.xn, w.attn_post_norm);
    gate_up(p, w);
    matmul<Matrix::ffn_down>(p, w.ffn_down, geglu(p), s.xn);
    add_normalized(p, s.xn, w.ffn_post_norm);
  }
};

}  // namespace kiln::gemma3
