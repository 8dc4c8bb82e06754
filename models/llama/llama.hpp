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
    auto& s = p.s;
    qkv(p, w);
    self_attention(p);
    attention_output<Store::Add>(p, w, s.x);
    gate_up(p, w);
    matmul<Matrix::ffn_down, Store::Add>(p, w.ffn_down, swiglu(p), s.x);
  }
};

}  // namespace kiln::llama
