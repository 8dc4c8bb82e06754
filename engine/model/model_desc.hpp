// What a compiled model is: architecture, hyperparameters and the type and
// shape of every tensor it reads. Codegen turns a ModelDesc into C++; at load
// time the binary reads the same description from the GGUF it is given and
// refuses the file if the two differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/tensor_type.hpp"

namespace kiln {

// The hyperparameters of a decoder model. Each is named once, in
// visit_hparams below: comparing, hashing, printing and generating code all
// go through that list.
struct Hyperparams {
  int n_vocab = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int n_ff = 0;
  int n_rot = 0;           // rotated dimensions per head (RoPE)
  int n_ctx_train = 0;     // context length the model was trained with (metadata)
  int n_swa = 0;           // the sliding-window layers' window (0: no such layers)
  float rope_base = 0.0f;
  float rope_freq_scale = 1.0f;  // linear RoPE scaling: positions are multiplied by this
  float rope_base_swa = 0.0f;    // the sliding-window layers' RoPE base (their scaling is none)
  float rms_eps = 0.0f;
  float attn_scale = 0.0f;       // what q . k is multiplied by before the softmax
  float final_logit_softcap = 0.0f;  // logits = cap * tanh(logits / cap) when not 0
  bool tied_output = false;  // no output.weight: logits use token_embd
  bool rope_freqs = false;   // a rope_freqs.weight tensor divides each pair's frequency (Llama 3.1)
  // LongRoPE (Phi-3): rope_factors_long.weight and rope_factors_short.weight
  // divide each pair's frequency, the long ones in a model compiled for more
  // than n_ctx_orig positions (rope_factors_tensor below).
  bool longrope = false;
  int n_ctx_orig = 0;              // rope.scaling.original_context_length, with LongRoPE or YaRN; else 0
  float rope_attn_factor = 1.0f;   // multiplies RoPE's cosines and sines (LongRoPE's and YaRN's mscale)
  // YaRN: each pair's angle scaled by a ramp from rope_freq_scale (low
  // frequencies, interpolated) to 1 (high ones, kept) between the pairs
  // that turn beta_fast and beta_slow times over n_ctx_orig positions.
  bool rope_yarn = false;
  float rope_yarn_beta_fast = 0.0f;
  float rope_yarn_beta_slow = 0.0f;
  // A mixture of experts in place of the feed-forward (0 experts: a dense model).
  int n_expert = 0;        // experts per layer
  int n_expert_used = 0;   // experts each token is routed to
  int n_ff_exp = 0;        // one expert's feed-forward width
  bool expert_weights_norm = false;  // the selected experts' weights are scaled to sum to 1
  int n_ff_shexp = 0;      // a shared expert's width, run on every token beside the routed ones (0: none)
};

// Calls f(identifier, label, field) for every field of h (const or not):
// the identifier as C++ and codegen name it, the label as messages do (the
// GGUF key where there is one).
template <class H, class F>
void visit_hparams(H& h, F&& f) {
  f("n_vocab", "vocab size", h.n_vocab);
  f("n_embd", "embedding_length", h.n_embd);
  f("n_layer", "block_count", h.n_layer);
  f("n_head", "attention.head_count", h.n_head);
  f("n_head_kv", "attention.head_count_kv", h.n_head_kv);
  f("head_dim", "attention.key_length", h.head_dim);
  f("n_ff", "feed_forward_length", h.n_ff);
  f("n_rot", "rope.dimension_count", h.n_rot);
  f("n_ctx_train", "context_length", h.n_ctx_train);
  f("n_swa", "attention.sliding_window", h.n_swa);
  f("rope_base", "rope.freq_base", h.rope_base);
  f("rope_freq_scale", "RoPE frequency scale", h.rope_freq_scale);
  f("rope_base_swa", "rope.freq_base_swa", h.rope_base_swa);
  f("rms_eps", "attention.layer_norm_rms_epsilon", h.rms_eps);
  f("attn_scale", "attention scale", h.attn_scale);
  f("final_logit_softcap", "final_logit_softcapping", h.final_logit_softcap);
  f("tied_output", "tied output", h.tied_output);
  f("rope_freqs", "RoPE frequency factors", h.rope_freqs);
  f("longrope", "LongRoPE factors", h.longrope);
  f("n_ctx_orig", "rope.scaling.original_context_length", h.n_ctx_orig);
  f("rope_attn_factor", "rope.scaling.attn_factor", h.rope_attn_factor);
  f("rope_yarn", "rope.scaling.type yarn", h.rope_yarn);
  f("rope_yarn_beta_fast", "rope.scaling.yarn_beta_fast", h.rope_yarn_beta_fast);
  f("rope_yarn_beta_slow", "rope.scaling.yarn_beta_slow", h.rope_yarn_beta_slow);
  f("n_expert", "expert_count", h.n_expert);
  f("n_expert_used", "expert_used_count", h.n_expert_used);
  f("n_ff_exp", "expert_feed_forward_length", h.n_ff_exp);
  f("expert_weights_norm", "expert_weights_norm", h.expert_weights_norm);
  f("n_ff_shexp", "expert_shared_feed_forward_length", h.n_ff_shexp);
}

// The tensor whose values divide each rotated pair's RoPE frequency in a
// model compiled for n_ctx positions, or null when it has none: Llama 3.1's
// rope_freqs.weight; with LongRoPE the long factors when n_ctx exceeds the
// original context, else the short ones, as llama.cpp chooses by the
// context it runs with (llama_model::get_rope_factors). Taking the values,
// not a Hyperparams, it serves the generated configurations too.
constexpr const char* rope_factors_tensor(bool rope_freqs, bool longrope, int n_ctx, int n_ctx_orig) {
  if (rope_freqs) return "rope_freqs.weight";
  if (longrope) return n_ctx > n_ctx_orig ? "rope_factors_long.weight" : "rope_factors_short.weight";
  return nullptr;
}

// What one layer is, where an architecture varies it from layer to layer:
// a compile-time property of the generated layer list.
struct LayerKind {
  bool sliding = false;  // attends to the last n_swa positions only
  bool rope = true;      // rotates Q and K (false: a NoPE layer)
  bool operator==(const LayerKind&) const = default;
};

struct TensorDesc {
  std::string name;
  TensorType type;
  std::vector<int64_t> dims;  // ne0 first, as in GGUF
};

struct ModelDesc {
  std::string arch;
  Hyperparams hp;
  std::vector<LayerKind> layers;    // one per block
  std::vector<TensorDesc> tensors;  // in the order the architecture lists them

  const TensorDesc& tensor(const std::string& name) const;
  // A 64-bit hash of everything above: names a model in state files.
  uint64_t fingerprint() const;
};

// "[64, 512]": tensor dimensions as messages print them.
std::string dims_text(const std::vector<int64_t>& dims);

// The first difference between what a binary was compiled for and what a
// file holds, as one line for the user, or nullopt when they match.
std::optional<std::string> describe_mismatch(const ModelDesc& compiled, const ModelDesc& file);

}  // namespace kiln
