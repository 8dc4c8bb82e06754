// Which weights a llama model reads, in which form, in one fixed order: the
// one list that loading from a GGUF, packing a weight image at build time and
// loading that image all go through (models/weight_sources.hpp), so the
// image holds exactly what the forward pass asks for.
#pragma once

#include <string>

#include "models/llama/block_tensors.hpp"
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
  for (int l = 0; l < C::n_layer; ++l)
    for (const BlockTensor& t : kBlockTensors)
      if (t.vector && is_present(t, C::qkv_bias)) w.layers[l].*t.vector = src.vector(block_tensor_name(l, t));
  w.output = src.matrix(C::tied_output ? "token_embd.weight" : "output.weight");
  for (int l = 0; l < C::n_layer; ++l)
    for (const BlockTensor& t : kBlockTensors)
      if (t.matrix && is_present(t, C::qkv_bias)) w.layers[l].*t.matrix = src.matrix(block_tensor_name(l, t));
  return rope_factors;
}

}  // namespace kiln::llama
