// The `qwen2` architecture (Qwen2, Qwen2.5): the llama decoder with biases on
// the Q, K and V projections.
#include "models/describe.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight", "attn_q.weight",      "attn_k.weight",   "attn_v.weight",
                                       "attn_q.bias",      "attn_k.bias",        "attn_v.bias",     "attn_output.weight",
                                       "ffn_norm.weight",  "ffn_gate.weight",    "ffn_up.weight",   "ffn_down.weight"};

}  // namespace

extern const Architecture kQwen2{.name = "qwen2", .header = "models/qwen2/qwen2.hpp", .type = "kiln::qwen2::Qwen2",
                                 .block = kBlock};

}  // namespace kiln
