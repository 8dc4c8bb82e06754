// The `llama` architecture: Llama 1/2/3, TinyLlama, Mistral, SmolLM and the
// llama2.c stories models. The plain decoder, with the optional Llama 3.1
// frequency factors.
#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight", "attn_q.weight",   "attn_k.weight", "attn_v.weight",
                                       "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
                                       "ffn_down.weight"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kLlama{"llama", "models/llama/llama.hpp", "kiln::llama::Llama", kBlock, describe, true};

namespace {

ModelDesc describe(const GgufFile& file) { return read_decoder(file, kLlama); }

}  // namespace

}  // namespace kiln
