// The `qwen2` architecture (Qwen2, Qwen2.5): the llama decoder with biases on
// the Q, K and V projections and RoPE on split halves ("NEOX" style).
#include "models/decoder_rules.hpp"
#include "models/describe.hpp"

namespace kiln {

ModelDesc describe_qwen2(const GgufFile& file) {
  return read_decoder(file, {.arch = "qwen2", .rope_neox = true, .qkv_bias = true, .rope_freqs_allowed = false});
}

}  // namespace kiln
