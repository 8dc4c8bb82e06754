// The `qwen2moe` architecture's layer (Qwen1.5-MoE, Qwen2-MoE): Qwen2's
// attention, then a mixture of experts in place of the feed-forward
// (models/decoder/moe.hpp): softmax over the router's logits, the top
// expert_used_count experts with their probabilities as weights (not
// renormalized), SwiGLU experts, and a shared expert every token runs,
// scaled by the sigmoid of its one-row gate.
#pragma once

#include "models/decoder/moe.hpp"
#include "models/qwen2/qwen2.hpp"

namespace kiln::qwen2moe {

struct Qwen2Moe {
  static constexpr kernels::RopeStyle rope_style = qwen2::Qwen2::rope_style;

  template <class P>
  static void layer(const P& p, const decoder::LayerWeights& w) {
    qwen2::Qwen2::attention(p, w);
    decoder::moe_ffn(p, w, w.ffn_norm);
  }
};

}  // namespace kiln::qwen2moe
