// The `qwen3` architecture's layer (Qwen3 dense): qwen2's without biases,
// with each head of Q and K RMS-normalized (attn_q_norm, attn_k_norm) before
// RoPE. Its head size comes from attention.key_length (128 in every Qwen3,
// not n_embd / n_head).
#pragma once

#include "models/decoder/blocks.hpp"

namespace kiln::qwen3 {

struct Qwen3 {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;

  // x += the attention block of x: also Qwen3-MoE's (models/qwen3moe/).
  template <class P>
  static void attention(const P& p, const decoder::LayerWeights& w) {
    using namespace decoder;
    auto& s = p.s;
    qkv(p, w);
    head_norm(p, s.q, w.attn_q_norm);
    head_norm(p, s.k_new, w.attn_k_norm);
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

}  // namespace kiln::qwen3
