// The `llama` architecture: Llama 1/2/3, TinyLlama, Mistral, SmolLM and the
// llama2.c stories models. The plain decoder, with the optional Llama 3.1
// frequency factors.
#include "models/describe.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight", "attn_q.weight",   "attn_k.weight", "attn_v.weight",
                                       "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
                                       "ffn_down.weight"};

}  // namespace

extern const Architecture kLlama{.name = "llama", .header = "models/llama/llama.hpp", .type = "kiln::llama::Llama",
                                 .block = kBlock, .rope_factors = RopeFactors::Freqs};

}  // namespace kiln
