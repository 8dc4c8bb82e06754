// Which weights a compiled model reads, in which form, in one fixed order:
// the one list that loading from a GGUF, packing a weight image at build time
// and loading that image all go through (models/weight_sources.hpp), so the
// image holds exactly what the forward pass asks for.
#pragma once

#include <string_view>

#include "engine/model/model_desc.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/decoder/forward.hpp"
#include "models/describe.hpp"

namespace kiln::decoder {

// Fills `w` from `src` (raw / vector / matrix by tensor name) with the
// tensors the description `d` lists (those of its architecture's blocks,
// matrices where block_matrices finds them: a fused tensor's parts as row
// ranges), and returns the RoPE frequency factors the model divides by
// (rope_factors_tensor; null when it has none). Vectors come first, then
// matrices (see models/loaded_weights.hpp).
template <class C, class Source>
const float* bind_weights(Weights<C>& w, Source& src, const ModelDesc& d) {
  const Architecture& arch = architecture(d.arch, "bind_weights");
  const char* factors = rope_factors_tensor(C::rope_freqs, C::longrope, C::n_ctx, C::n_ctx_orig);
  const float* rope_factors = factors ? src.vector(factors) : nullptr;
  w.token_embd = src.raw("token_embd.weight");
  w.output_norm = src.vector("output_norm.weight");
  for (int l = 0; l < C::n_layer; ++l)
    for (const std::string_view name : arch.block)
      if (const BlockTensor& t = block_tensor(name); t.vector)
        w.layers[l].*t.vector = src.vector(block_tensor_name(l, name));
  w.output = src.matrix(C::tied_output ? "token_embd.weight" : "output.weight");
  for (int l = 0; l < C::n_layer; ++l)
    for (const MatrixSource& m : block_matrices(d, arch, l))
      w.layers[l].*m.matrix->matrix = src.matrix(m.tensor, m.rows);
  return rope_factors;
}

}  // namespace kiln::decoder
