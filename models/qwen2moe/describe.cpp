// The `qwen2moe` architecture (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B), as
// llama.cpp reads it (llama_model_qwen2moe): qwen2's attention, a mixture of
// experts (read_decoder reads the expert keys, and
// expert_shared_feed_forward_length for the shared expert, default
// feed_forward_length) and a shared expert with its gate. llama.cpp's graph
// never renormalizes the routed experts' weights, whatever the file says.
#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {
    "attn_norm.weight",      "attn_q.weight",         "attn_k.weight",
    "attn_v.weight",         "attn_q.bias",           "attn_k.bias",
    "attn_v.bias",           "attn_output.weight",    "ffn_norm.weight",
    "ffn_gate_inp.weight",   "ffn_gate_exps.weight",  "ffn_up_exps.weight",
    "ffn_down_exps.weight",  "ffn_gate_inp_shexp.weight", "ffn_gate_shexp.weight",
    "ffn_up_shexp.weight",   "ffn_down_shexp.weight"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kQwen2Moe{.name = "qwen2moe", .header = "models/qwen2moe/qwen2moe.hpp",
                                    .type = "kiln::qwen2moe::Qwen2Moe", .block = kBlock, .describe = describe};

namespace {

ModelDesc describe(const GgufFile& file) {
  ModelDesc d = read_decoder(file, kQwen2Moe);
  d.hp.expert_weights_norm = false;
  return d;
}

}  // namespace

}  // namespace kiln
