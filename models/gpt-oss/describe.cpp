// The `gpt-oss` architecture, as llama.cpp reads it (llama_model_openai_moe):
// the shared read_decoder reads the common and expert keys and YaRN's
// scaling; attention.sliding_window is required, and layer l attends to
// that window when l % P < P - 1 (P: attention.sliding_window_pattern,
// default 2: the even layers), rotating with rope.freq_base_swa (default:
// rope.freq_base) and the same scaling. The experts' weights are the
// softmax over the chosen ones, never renormalized.
#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {
    "attn_norm.weight",     "attn_q.weight",      "attn_q.bias",
    "attn_k.weight",        "attn_k.bias",        "attn_v.weight",
    "attn_v.bias",          "attn_output.weight", "attn_output.bias",
    "attn_sinks.weight",    "post_attention_norm.weight",
    "ffn_gate_inp.weight",  "ffn_gate_inp.bias",  "ffn_gate_exps.weight",
    "ffn_gate_exps.bias",   "ffn_up_exps.weight", "ffn_up_exps.bias",
    "ffn_down_exps.weight", "ffn_down_exps.bias"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kGptOss{.name = "gpt-oss", .header = "models/gpt-oss/gpt-oss.hpp",
                                  .type = "kiln::gpt_oss::GptOss", .block = kBlock, .describe = describe};

namespace {

ModelDesc describe(const GgufFile& file) {
  ModelDesc d = read_decoder(file, kGptOss);
  Hyperparams& hp = d.hp;
  const std::string p = "gpt-oss.";
  if (!file.find(p + "attention.sliding_window"))
    throw Error(file.path() + ": key '" + p + "attention.sliding_window' is missing");
  hp.n_swa = count_key(file, p + "attention.sliding_window", 0);
  const size_t period = static_cast<size_t>(count_key(file, p + "attention.sliding_window_pattern", 2));
  for (size_t l = 0; l < d.layers.size(); ++l) d.layers[l].sliding = l % period < period - 1;
  hp.rope_base_swa = static_cast<float>(file.get_float_or(p + "rope.freq_base_swa", hp.rope_base));
  hp.expert_weights_norm = false;
  return d;
}

}  // namespace

}  // namespace kiln
