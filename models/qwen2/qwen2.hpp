// The `qwen2` architecture's layer (Qwen2, Qwen2.5): llama's, with biases on
// the Q, K and V projections and RoPE on split halves ("NEOX").
#pragma once

#include "models/decoder/blocks.hpp"

namespace kiln::qwen2 {

struct Qwen2 {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    using enum Matrix;
    auto& s = p.s;
    const auto in = norm<attn_q, attn_k, attn_v>(p, w.attn_norm);
    matmul<attn_q, Store::Replace, Sync::NoWait>(p, w.attn_q, in, s.q);
    matmul<attn_k, Store::Replace, Sync::NoWait>(p, w.attn_k, in, s.k_new);
    matmul<attn_v>(p, w.attn_v, in, s.v_new);
    add_bias(p, s.q, w.attn_q_bias);
    add_bias(p, s.k_new, w.attn_k_bias);
    add_bias(p, s.v_new, w.attn_v_bias);
    self_attention(p);
    matmul<attn_output, Store::Add>(p, w.attn_output, input<attn_output>(p, s.att), s.x);

    const auto ffn_in = norm<ffn_gate, ffn_up>(p, w.ffn_norm);
    matmul<ffn_gate, Store::Replace, Sync::NoWait>(p, w.ffn_gate, ffn_in, s.gate);
    matmul<ffn_up>(p, w.ffn_up, ffn_in, s.up);
    matmul<ffn_down, Store::Add>(p, w.ffn_down, swiglu(p), s.x);
  }
};

}  // namespace kiln::qwen2
