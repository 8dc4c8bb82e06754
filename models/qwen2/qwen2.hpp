// The `qwen2` architecture's layer (Qwen2, Qwen2.5): llama's, with biases on
// the Q, K and V projections and RoPE on split halves ("NEOX").
#pragma once

#include "models/decoder/blocks.hpp"

namespace kiln::qwen2 {

struct Qwen2 {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;

  // x += the attention block of x: also Qwen2-MoE's (models/qwen2moe/).
  template <class P>
  static void attention(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    auto& s = p.s;
    qkv(p, w);
    add_bias(p, s.q, w.attn_q_bias);
    add_bias(p, s.k_new, w.attn_k_bias);
    add_bias(p, s.v_new, w.attn_v_bias);
    self_attention(p);
    attention_output<Store::Add>(p, w, s.x);
  }

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    attention(p, w);
    gate_up(p, w);
    matmul<Matrix::ffn_down, Store::Add>(p, w.ffn_down, swiglu(p), p.s.x);
  }
};

}  // namespace kiln::qwen2
