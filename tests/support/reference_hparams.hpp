// The reference forward pass's own reading of a model's hyperparameters from
// its GGUF keys and tensors, with llama.cpp's conventions and defaults written
// out here (not kiln's describer, whose output the compiled models are built
// from), so that a misread key shows up as a disagreement.
#pragma once

#include <string>

#include "engine/gguf/gguf.hpp"

namespace kiln::test {

struct ReferenceHparams {
  std::string arch;  // general.architecture: llama, qwen2, qwen3, gemma3, smollm3, phi3, qwen3moe, qwen2moe or gpt-oss
  int n_embd = 0, n_layer = 0, n_ff = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_rot = 0, n_vocab = 0, n_ctx = 0;
  double rms_eps = 0;
  double rope_base = 0;
  double rope_position_scale = 1;  // linear RoPE scaling: positions are multiplied by 1 / factor
  bool rope_halves = false;        // NEOX style (qwen2): pairs (i, i + n_rot / 2); else adjacent (2i, 2i + 1)
  bool qkv_bias = false;           // Q/K/V bias tensors present
  bool tied_output = false;        // no output.weight: logits use token_embd
  bool rope_freqs = false;         // rope_freqs.weight present (Llama 3.1 frequency factors)
  bool longrope = false;           // rope_factors_long/short.weight present (phi3)
  int n_ctx_orig = 0;              // beyond this context LongRoPE uses its long factors
  double rope_attn_factor = 1;     // multiplies RoPE's cos and sin
  bool qk_norm = false;            // attn_q_norm / attn_k_norm present (qwen3, gemma3)
  bool gemma = false;              // gemma3: sqrt(n_embd)-scaled embeddings, post-norms, GELU feed-forward
  bool gate_up_fused = false;      // phi3: ffn_up holds the gate's rows, then the up projection's
  double attn_scale = 0;           // multiplies q . k
  int n_swa = 0;                   // sliding window (gemma3), 0 if none
  int swa_period = 0;              // layer l slides when l % period < period - 1
  double rope_base_swa = 0;        // the sliding layers' RoPE base (no scaling there, but in gpt-oss)
  int no_rope_step = 0;            // smollm3: layer l has no RoPE when (l + 1) % step == 0
  double final_logit_softcap = 0;  // logits = cap * tanh(logits / cap) when > 0
  // qwen3moe, qwen2moe: a mixture of n_expert experts of width n_ff_exp in
  // place of the feed-forward, n_expert_used per token, their weights
  // normalized (qwen3moe) or not (qwen2moe); qwen2moe's shared expert of
  // width n_ff_shexp on every token, scaled by the sigmoid of its gate.
  int n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  bool expert_weights_norm = false;
  // YaRN RoPE scaling (gpt-oss): ggml's rope_yarn with ext_factor 1, the
  // ramp between the pairs beta_fast and beta_slow name, over n_ctx_orig.
  bool yarn = false;
  double yarn_beta_fast = 0, yarn_beta_slow = 0;
  // gpt-oss: attention sinks, an output bias, post_attention_norm before the
  // experts, a router and experts with biases, a softmax over the chosen
  // experts' logits, the clamped SwiGLU; its sliding layers scaled as the rest.
  bool gpt_oss = false;

  bool sliding(int layer) const { return n_swa > 0 && layer % swa_period < swa_period - 1; }
  bool rope(int layer) const { return no_rope_step == 0 || (layer + 1) % no_rope_step != 0; }
};

// Throws kiln::Error naming the key for a missing required key or an
// architecture or RoPE scaling the reference does not implement.
ReferenceHparams read_reference_hparams(const GgufFile& file);

}  // namespace kiln::test
