// The `phi3` architecture's layer (Phi-3, Phi-3.5-mini, Phi-4-mini): llama's,
// with RoPE on split halves ("NEOX") of the first rope.dimension_count
// dimensions of each head. Its fused matrices (Q, K and V in attn_qkv; the
// gate and up projections in ffn_up) are bound as llama's separate ones at
// load time (models/decoder/block_tensors.hpp, FusedTensor), LongRoPE's
// factors divide the RoPE frequencies (CompiledModel) and its attention
// factor scales every rotation (self_attention), so llama's layer computes
// what llama.cpp's phi3 graph does (which scales Q by 1 / sqrt(head size)
// before attention, where kiln's attention scales the scores by the same
// factor).
#pragma once

#include "models/llama/llama.hpp"

namespace kiln::phi3 {

struct Phi3 : llama::Llama {
  static constexpr kernels::RopeStyle rope_style = kernels::RopeStyle::Neox;
};

}  // namespace kiln::phi3
