// The `qwen3` architecture's layer (Qwen3 dense): qwen2's without biases,
// with each head of Q and K RMS-normalized (attn_q_norm, attn_k_norm) before
// RoPE. Its head size comes from attention.key_length (128 in every Qwen3,
// not n_embd / n_head).
#pragma once

#include "models/decoder/blocks.hpp"

namespace kiln::qwen3 {

struct Qwen3 {
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
    head_norm(p, s.q, w.attn_q_norm);
    head_norm(p, s.k_new, w.attn_k_norm);
    self_attention(p);
    matmul<attn_output, Store::Add>(p, w.attn_output, input<attn_output>(p, s.att), s.x);

    const auto ffn_in = norm<ffn_gate, ffn_up>(p, w.ffn_norm);
    matmul<ffn_gate, Store::Replace, Sync::NoWait>(p, w.ffn_gate, ffn_in, s.gate);
    matmul<ffn_up>(p, w.ffn_up, ffn_in, s.up);
    matmul<ffn_down, Store::Add>(p, w.ffn_down, swiglu(p), s.x);
  }
};

}  // namespace kiln::qwen3
