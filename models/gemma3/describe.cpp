// The `gemma3` architecture (Gemma 3 text models), as llama.cpp reads it:
// Q/K norms and post-norms on top of the llama block; with
// attention.sliding_window set, layer l attends to that window unless l % P
// == P - 1 (P: attention.sliding_window_pattern, default 6), and those
// sliding layers rotate with rope.freq_base_swa (default 10000) and no
// scaling. The query scale is 1 / sqrt(head size), except for the 27B model
// (62 layers), which scales by 1 / sqrt(n_embd / n_head).
#include <cmath>

#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {
    "attn_norm.weight",   "attn_q.weight",   "attn_k.weight",   "attn_v.weight",
    "attn_q_norm.weight", "attn_k_norm.weight", "attn_output.weight", "post_attention_norm.weight",
    "ffn_norm.weight",    "ffn_gate.weight", "ffn_up.weight",   "ffn_down.weight",
    "post_ffw_norm.weight"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kGemma3{.name = "gemma3", .header = "models/gemma3/gemma3.hpp", .type = "kiln::gemma3::Gemma3",
                                  .block = kBlock, .describe = describe};

namespace {

ModelDesc describe(const GgufFile& file) {
  ModelDesc d = read_decoder(file, kGemma3);
  Hyperparams& hp = d.hp;
  const std::string p = "gemma3.";
  if (hp.rope_yarn)
    throw Error(file.path() + ": YaRN RoPE scaling is not supported for gemma3 (its sliding layers are not scaled)");
  if (file.find(p + "attention.sliding_window")) {
    hp.n_swa = count_key(file, p + "attention.sliding_window", 0);
    const size_t period = static_cast<size_t>(count_key(file, p + "attention.sliding_window_pattern", 6));
    for (size_t l = 0; l < d.layers.size(); ++l) d.layers[l].sliding = l % period < period - 1;
    hp.rope_base_swa = static_cast<float>(file.get_float_or(p + "rope.freq_base_swa", 10000.0));
  }
  constexpr int kLayersOf27B = 62;
  const int scale_dim = hp.n_layer == kLayersOf27B ? hp.n_embd / hp.n_head : hp.head_dim;
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(scale_dim));
  hp.final_logit_softcap = static_cast<float>(file.get_float_or(p + "final_logit_softcapping", 0.0));
  if (!(hp.final_logit_softcap >= 0.0f))
    throw Error(file.path() + ": " + p + "final_logit_softcapping must not be negative");
  return d;
}

}  // namespace

}  // namespace kiln
