// Which weights a compiled model reads, in which form, in one fixed order:
// the one list that loading from a GGUF, packing a weight image at build time
// and loading that image all go through (models/weight_sources.hpp), so the
// image holds exactly what the forward pass asks for.
#pragma once

#include <string>
#include <unordered_set>

#include "engine/model_desc.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/decoder/forward.hpp"

namespace kiln::decoder {

// Fills `w` from `src` (raw / vector / matrix by tensor name) with the
// tensors the description `d` lists (those of its architecture's blocks),
// and returns the Llama 3.1 RoPE frequency factors (null when the model has
// none). Vectors come first, then matrices (see models/loaded_weights.hpp).
template <class C, class Source>
const float* bind_weights(Weights<C>& w, Source& src, const ModelDesc& d) {
  std::unordered_set<std::string> present;
  for (const TensorDesc& t : d.tensors) present.insert(t.name);
  auto each_block_tensor = [&](auto bind) {
    for (int l = 0; l < C::n_layer; ++l)
      for (const BlockTensor& t : kBlockTensors)
        if (const std::string name = block_tensor_name(l, t); present.count(name)) bind(w.layers[l], t, name);
  };
  const float* rope_factors = nullptr;
  if constexpr (C::rope_freqs) rope_factors = src.vector("rope_freqs.weight");
  w.token_embd = src.raw("token_embd.weight");
  w.output_norm = src.vector("output_norm.weight");
  each_block_tensor([&](LayerWeights& lw, const BlockTensor& t, const std::string& name) {
    if (t.vector) lw.*t.vector = src.vector(name);
  });
  w.output = src.matrix(C::tied_output ? "token_embd.weight" : "output.weight");
  each_block_tensor([&](LayerWeights& lw, const BlockTensor& t, const std::string& name) {
    if (t.matrix) lw.*t.matrix = src.matrix(name);
  });
  return rope_factors;
}

}  // namespace kiln::decoder
