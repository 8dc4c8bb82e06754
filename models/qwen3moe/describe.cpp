// The `qwen3moe` architecture (Qwen3-MoE): Qwen3's attention and a mixture
// of experts (a router and the experts' matrices as 3-D tensors) in place of
// the feed-forward; the shared read_decoder reads the expert keys.
#include "models/describe.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight",     "attn_q.weight",        "attn_k.weight",
                                       "attn_v.weight",        "attn_q_norm.weight",   "attn_k_norm.weight",
                                       "attn_output.weight",   "ffn_norm.weight",      "ffn_gate_inp.weight",
                                       "ffn_gate_exps.weight", "ffn_up_exps.weight",   "ffn_down_exps.weight"};

}  // namespace

extern const Architecture kQwen3Moe{.name = "qwen3moe", .header = "models/qwen3moe/qwen3moe.hpp",
                                    .type = "kiln::qwen3moe::Qwen3Moe", .block = kBlock};

}  // namespace kiln
