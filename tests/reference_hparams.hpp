// The reference forward pass's own reading of a model's hyperparameters from
// its GGUF keys and tensors, with llama.cpp's conventions and defaults written
// out here (not kiln's describer, whose output the compiled models are built
// from), so that a misread key shows up as a disagreement.
#pragma once

#include <string>

#include "engine/gguf/gguf.hpp"

namespace kiln::test {

struct ReferenceHparams {
  std::string arch;  // general.architecture: llama or qwen2
  int n_embd = 0, n_layer = 0, n_ff = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_rot = 0, n_vocab = 0, n_ctx = 0;
  double rms_eps = 0;
  double rope_base = 0;
  double rope_position_scale = 1;  // linear RoPE scaling: positions are multiplied by 1 / factor
  bool rope_halves = false;        // NEOX style (qwen2): pairs (i, i + n_rot / 2); else adjacent (2i, 2i + 1)
  bool qkv_bias = false;           // Q/K/V bias tensors present
  bool tied_output = false;        // no output.weight: logits use token_embd
  bool rope_freqs = false;         // rope_freqs.weight present (Llama 3.1 frequency factors)
};

// Throws kiln::Error naming the key for a missing required key or an
// architecture or RoPE scaling the reference does not implement.
ReferenceHparams read_reference_hparams(const GgufFile& file);

}  // namespace kiln::test
