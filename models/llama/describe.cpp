// The `llama` architecture: Llama 1/2/3, TinyLlama, Mistral, SmolLM and the
// llama2.c stories models. Plain decoder, RoPE on adjacent pairs, and the
// optional Llama 3.1 frequency factors.
#include "models/decoder_rules.hpp"
#include "models/describe.hpp"

namespace kiln {

ModelDesc describe_llama(const GgufFile& file) {
  return read_decoder(file, {.arch = "llama", .rope_neox = false, .qkv_bias = false, .rope_freqs_allowed = true});
}

}  // namespace kiln
