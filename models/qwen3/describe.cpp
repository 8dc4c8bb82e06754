// The `qwen3` architecture (Qwen3 dense models): the llama decoder with a
// per-head RMSNorm on Q and K, and its head size from attention.key_length.
#include "models/describe.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight",   "attn_q.weight",      "attn_k.weight",
                                       "attn_v.weight",      "attn_q_norm.weight", "attn_k_norm.weight",
                                       "attn_output.weight", "ffn_norm.weight",    "ffn_gate.weight",
                                       "ffn_up.weight",      "ffn_down.weight"};

}  // namespace

extern const Architecture kQwen3{.name = "qwen3", .header = "models/qwen3/qwen3.hpp", .type = "kiln::qwen3::Qwen3",
                                 .block = kBlock};

}  // namespace kiln
