// Which weights a llama model reads, in which form, in one fixed order: the
// one list that loading from a GGUF, packing a weight image at build time and
// loading that image all go through (models/weight_sources.hpp), so the
// image holds exactly what the forward pass asks for.
#pragma once

#include <string>

#include "models/llama/forward.hpp"

namespace kiln::llama {

// Fills `w` from `src` (raw / vector / matrix by tensor name) and returns the
// Llama 3.1 RoPE frequency factors (null when the model has none). Vectors
// come first, then matrices (see models/loaded_weights.hpp).
template <class C, class Source>
const float* bind_weights(Weights<C>& w, Source& src) {
  const float* rope_factors = nullptr;
  if constexpr (C::rope_freqs) rope_factors = src.vector("rope_freqs.weight");
  w.token_embd = src.raw("token_embd.weight");
  w.output_norm = src.vector("output_norm.weight");
  for (int l = 0; l < C::n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    lw.attn_norm = src.vector(b + "attn_norm.weight");
    lw.ffn_norm = src.vector(b + "ffn_norm.weight");
    if constexpr (C::qkv_bias) {
      lw.attn_q_bias = src.vector(b + "attn_q.bias");
      lw.attn_k_bias = src.vector(b + "attn_k.bias");
      lw.attn_v_bias = src.vector(b + "attn_v.bias");
    }
  }
  w.output = src.matrix(C::tied_output ? "token_embd.weight" : "output.weight");
  for (int l = 0; l < C::n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    lw.attn_q = src.matrix(b + "attn_q.weight");
    lw.attn_k = src.matrix(b + "attn_k.weight");
    lw.attn_v = src.matrix(b + "attn_v.weight");
    lw.attn_output = src.matrix(b + "attn_output.weight");
    lw.ffn_gate = src.matrix(b + "ffn_gate.weight");
    lw.ffn_up = src.matrix(b + "ffn_up.weight");
    lw.ffn_down = src.matrix(b + "ffn_down.weight");
  }
  return rope_factors;
}

}  // namespace kiln::llama
