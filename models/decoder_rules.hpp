// The llama-style decoder that several GGUF architectures share (token
// embedding, pre-norm attention with RoPE and grouped-query heads, SwiGLU
// feed-forward, final norm and classifier). Each architecture's describe.cpp
// states how it differs, as DecoderRules; read_decoder() does the rest.
#pragma once

#include <string>

#include "engine/gguf/gguf.hpp"
#include "engine/model_desc.hpp"

namespace kiln {

struct DecoderRules {
  std::string arch;          // general.architecture, also the key prefix ("llama" -> "llama.*")
  bool rope_neox = false;    // RoPE on halves instead of adjacent pairs
  bool qkv_bias = false;     // attn_q/k/v carry bias vectors
  bool rope_freqs_allowed = false;  // may have rope_freqs.weight (Llama 3.1 frequency factors)
};

// Hyperparameters (with llama.cpp's defaults where keys are absent) and the
// tensor list, checked against each other. Throws kiln::Error naming the key
// or tensor that is missing, malformed or not part of the architecture.
ModelDesc read_decoder(const GgufFile& file, const DecoderRules& rules);

}  // namespace kiln
