// The `qwen3moe` architecture's layer (Qwen3-MoE: Qwen3-30B-A3B,
// Qwen3-235B-A22B): Qwen3's attention, then a mixture of experts in place of
// the feed-forward (models/decoder/moe.hpp): softmax over the router's
// logits, the top expert_used_count experts, their weights normalized to
// sum to 1, SwiGLU experts.
#pragma once

#include "models/decoder/moe.hpp"
#include "models/qwen3/qwen3.hpp"

namespace kiln::qwen3moe {

struct Qwen3Moe {
  static constexpr kernels::RopeStyle rope_style = qwen3::Qwen3::rope_style;

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    qwen3::Qwen3::attention(p, w);
    decoder::moe_ffn(p, w, w.ffn_norm);
  }
};

}  // namespace kiln::qwen3moe
