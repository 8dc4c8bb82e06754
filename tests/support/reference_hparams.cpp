#include "tests/support/reference_hparams.hpp"

#include <cmath>

#include "engine/error/error.hpp"

namespace kiln::test {

ReferenceHparams read_reference_hparams(const GgufFile& f) {
  ReferenceHparams h;
  h.arch = f.get_string("general.architecture");
  // llama.cpp's rope types (llama_model_rope_type): LLAMA_ROPE_TYPE_NORM
  // (adjacent pairs) for llama and smollm3, LLAMA_ROPE_TYPE_NEOX (halves) for
  // qwen2, qwen3, gemma3, phi3, qwen3moe, qwen2moe and gpt-oss.
  if (h.arch == "qwen2" || h.arch == "qwen3" || h.arch == "gemma3" || h.arch == "phi3" || h.arch == "qwen3moe" ||
      h.arch == "qwen2moe" || h.arch == "gpt-oss")
    h.rope_halves = true;
  else if (h.arch != "llama" && h.arch != "smollm3")
    throw Error("reference: architecture '" + h.arch + "' is not implemented");
  const std::string p = h.arch + ".";
  auto count = [&](const std::string& key) { return static_cast<int>(f.get_uint(p + key)); };
  h.n_embd = count("embedding_length");
  h.n_layer = count("block_count");
  h.n_ff = count("feed_forward_length");
  h.n_ctx = count("context_length");
  h.n_head = count("attention.head_count");
  h.n_head_kv = static_cast<int>(f.get_uint_or(p + "attention.head_count_kv", uint64_t(h.n_head)));
  h.head_dim = static_cast<int>(f.get_uint_or(p + "attention.key_length", uint64_t(h.n_embd / h.n_head)));
  h.n_rot = static_cast<int>(f.get_uint_or(p + "rope.dimension_count", uint64_t(h.head_dim)));
  const double eps = f.get_float_or(p + "attention.layer_norm_rms_epsilon", 0.0);
  if (!(eps > 0)) throw Error("reference: " + p + "attention.layer_norm_rms_epsilon is missing");
  h.rms_eps = eps;
  h.rope_base = f.get_float_or(p + "rope.freq_base", 10000.0);

  // Linear scaling, as llama.cpp reads it: positions times 1 / rope.scaling.factor
  // (older files: rope.scale_linear) whenever a factor is given.
  const std::string scaling = f.get_string_or(p + "rope.scaling.type", "none");
  if (scaling != "none" && scaling != "linear" && scaling != "yarn")
    throw Error("reference: RoPE scaling '" + scaling + "' is not implemented");
  const double factor = f.get_float_or(p + "rope.scaling.factor", f.get_float_or(p + "rope.scale_linear", 0.0));
  if (factor > 0) h.rope_position_scale = 1.0 / factor;
  // llama_hparams' YaRN defaults: beta_fast 32, beta_slow 1 (keys where given).
  h.yarn = scaling == "yarn";
  h.yarn_beta_fast = f.get_float_or(p + "rope.scaling.yarn_beta_fast", 32.0);
  h.yarn_beta_slow = f.get_float_or(p + "rope.scaling.yarn_beta_slow", 1.0);

  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw Error("reference: token_embd.weight is missing");
  h.n_vocab = static_cast<int>(embd->dims[1]);
  h.tied_output = f.find_tensor("output.weight") == nullptr;
  h.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  h.rope_freqs = f.find_tensor("rope_freqs.weight") != nullptr;
  // llama_model::load_hparams: n_ctx_orig_yarn is the training context unless
  // rope.scaling.original_context_length says otherwise; the context's
  // attention factor is rope.scaling.attn_factor (1 without it) as long as
  // there is no YaRN (llama_context's constructor). src/models/phi3.cpp loads
  // rope_factors_long/short (get_rope_factors picks by the context size), and
  // ignores attention.sliding_window (it sets n_swa = 0), so h.n_swa stays 0.
  h.longrope = f.find_tensor("rope_factors_long.weight") != nullptr;
  h.n_ctx_orig = static_cast<int>(f.get_uint_or(p + "rope.scaling.original_context_length", uint64_t(h.n_ctx)));
  h.rope_attn_factor = f.get_float_or(p + "rope.scaling.attn_factor", 1.0);
  // With YaRN, llama_context multiplies it by get_mscale(factor) = 1 + 0.1 ln
  // factor and divides by the same, which ggml's rope_yarn multiplies in again
  // (1 + 0.1 ln(1 / freq_scale)): cos and sin are scaled by that.
  if (h.yarn && factor > 1) h.rope_attn_factor *= 1.0 + 0.1 * std::log(factor);
  // phi3.cpp: build_ffn with ffn_up alone, LLM_FFN_SWIGLU and LLM_FFN_SEQ:
  // ggml_swiglu of the fused output, silu of its first half times the second.
  h.gate_up_fused = h.arch == "phi3";
  h.qk_norm = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  h.attn_scale = 1.0 / std::sqrt(double(h.head_dim));
  // src/models/smollm3.cpp: n_no_rope_layer_step = 4, a layer uses RoPE when (il + 1) % 4 != 0.
  if (h.arch == "smollm3") h.no_rope_step = 4;
  // src/models/gemma3.cpp: the sliding window only when the key is set, with
  // a period of 6 unless the file says otherwise (set_swa_pattern: layer il
  // slides when il % period < period - 1), the SWA layers' base from
  // rope.freq_base_swa (llama_hparams' default 10000) and scale 1; queries
  // scaled by 1/sqrt(head size) (1/sqrt(n_embd / n_head) for the 62-layer 27B).
  if (h.arch == "gemma3") {
    h.gemma = true;
    h.n_swa = static_cast<int>(f.get_uint_or(p + "attention.sliding_window", 0));
    h.swa_period = static_cast<int>(f.get_uint_or(p + "attention.sliding_window_pattern", 6));
    h.rope_base_swa = f.get_float_or(p + "rope.freq_base_swa", 10000.0);
    if (h.n_layer == 62) h.attn_scale = 1.0 / std::sqrt(double(h.n_embd / h.n_head));
    h.final_logit_softcap = f.get_float_or(p + "final_logit_softcapping", 0.0);
  }
  // src/models/qwen3moe.cpp and qwen2moe.cpp: expert_count and
  // expert_used_count (required there), expert_feed_forward_length (else
  // n_ff / n_expert_used); qwen3moe's build_moe_ffn call normalizes the
  // weights whatever the file says, qwen2moe's never does (norm_w = false,
  // no scale: the file's expert_weights_norm and expert_weights_scale are not
  // read). qwen2moe's shared expert: expert_shared_feed_forward_length, else n_ff.
  if (h.arch == "qwen3moe" || h.arch == "qwen2moe") {
    h.n_expert = count("expert_count");
    h.n_expert_used = count("expert_used_count");
    h.n_ff_exp = static_cast<int>(f.get_uint_or(p + "expert_feed_forward_length", uint64_t(h.n_ff / h.n_expert_used)));
    h.expert_weights_norm = h.arch == "qwen3moe";
  }
  if (h.arch == "qwen2moe")
    h.n_ff_shexp = static_cast<int>(f.get_uint_or(p + "expert_shared_feed_forward_length", uint64_t(h.n_ff)));
  // src/models/openai-moe.cpp: attention.sliding_window required, the
  // pattern 2 (even layers slide) unless the file says otherwise, the SWA
  // layers' base rope.freq_base_swa (default: rope.freq_base) and the same
  // scale; the experts' keys required; build_moe_ffn with SOFTMAX_WEIGHT
  // gating and no normalization.
  if (h.arch == "gpt-oss") {
    h.gpt_oss = true;
    h.n_swa = count("attention.sliding_window");
    h.swa_period = static_cast<int>(f.get_uint_or(p + "attention.sliding_window_pattern", 2));
    h.rope_base_swa = f.get_float_or(p + "rope.freq_base_swa", h.rope_base);
    h.n_expert = count("expert_count");
    h.n_expert_used = count("expert_used_count");
    h.n_ff_exp = count("expert_feed_forward_length");
  }
  return h;
}

}  // namespace kiln::test
