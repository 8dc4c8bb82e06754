// The `phi3` architecture (Phi-3, Phi-3.5-mini, Phi-4-mini), as llama.cpp
// reads it: the llama decoder with Q, K and V in one matrix (attn_qkv, or
// three as llama.cpp also accepts), the gate and up projections in one
// (ffn_up, the gate's rows first), partial rotary (rope.dimension_count below
// the head size) and LongRoPE's long and short frequency factors with
// rope.scaling.original_context_length and attn_factor (read_decoder).
//
// attention.sliding_window, which the converter writes, is not read: llama.cpp
// disables Phi's sliding window (phi3.cpp sets n_swa = 0, with a warning) and
// attends to the whole context, and kiln computes what llama.cpp does.
#include "models/decoder/read_decoder.hpp"

namespace kiln {

namespace {

constexpr std::string_view kBlock[] = {"attn_norm.weight", "attn_output.weight", "ffn_norm.weight", "ffn_down.weight"};
constexpr std::string_view kFused[] = {"attn_qkv.weight", "ffn_up.weight"};

ModelDesc describe(const GgufFile& file);

}  // namespace

extern const Architecture kPhi3{.name = "phi3", .header = "models/phi3/phi3.hpp", .type = "kiln::phi3::Phi3",
                                .block = kBlock, .rope_factors = RopeFactors::LongShort, .fused = kFused,
                                .describe = describe};

namespace {

ModelDesc describe(const GgufFile& file) {
  ModelDesc d = read_decoder(file, kPhi3);
  // llama.cpp sizes Q and the output projection by n_embd for phi3.
  if (int64_t(d.hp.n_head) * d.hp.head_dim != d.hp.n_embd)
    throw Error(file.path() + ": phi3 needs head_count x head size = embedding_length, the file has " +
                std::to_string(d.hp.n_head) + " x " + std::to_string(d.hp.head_dim) + " and " +
                std::to_string(d.hp.n_embd));
  return d;
}

}  // namespace

}  // namespace kiln
