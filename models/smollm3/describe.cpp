// The `smollm3` architecture (SmolLM3): llama's layer and tensors, with no
// RoPE on every fourth layer (layers 3, 7, 11, ...), as llama.cpp fixes it
// for the architecture (its files carry no key for it).
#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight", "attn_q.weight",   "attn_k.weight", "attn_v.weight",
                                       "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
                                       "ffn_down.weight"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kSmolLM3{.name = "smollm3", .header = "models/llama/llama.hpp", .type = "kiln::llama::Llama",
                                   .block = kBlock, .describe = describe};

namespace {

ModelDesc describe(const GgufFile& file) {
  constexpr size_t kNoRopeLayerStep = 4;
  ModelDesc d = read_decoder(file, kSmolLM3);
  for (size_t l = 0; l < d.layers.size(); ++l) d.layers[l].rope = (l + 1) % kNoRopeLayerStep != 0;
  return d;
}

}  // namespace

}  // namespace kiln
