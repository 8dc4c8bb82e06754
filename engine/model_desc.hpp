// What a compiled model is: architecture, hyperparameters and the type and
// shape of every tensor it reads. Codegen turns a ModelDesc into C++; at load
// time the binary reads the same description from the GGUF it is given and
// refuses the file if the two differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/tensor_type.hpp"

namespace kiln {

struct Hyperparams {
  int n_vocab = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int n_ff = 0;
  int n_rot = 0;           // rotated dimensions per head (RoPE)
  int n_ctx_train = 0;     // context length the model was trained with (metadata)
  float rope_base = 0.0f;
  float rope_freq_scale = 1.0f;  // linear RoPE scaling: positions are multiplied by this
  float rms_eps = 0.0f;
  bool tied_output = false;  // no output.weight: logits use token_embd
  // What sets an architecture apart from plain llama (models/<arch>/describe.cpp).
  bool rope_neox = false;    // rotate the halves (x[i], x[i + n_rot/2]) instead of adjacent pairs
  bool qkv_bias = false;     // attn_q/k/v have bias vectors
  bool rope_freqs = false;   // a rope_freqs.weight tensor divides each pair's frequency (Llama 3.1)
};

struct TensorDesc {
  std::string name;
  TensorType type;
  std::vector<int64_t> dims;  // ne0 first, as in GGUF
};

struct ModelDesc {
  std::string arch;
  Hyperparams hp;
  std::vector<TensorDesc> tensors;  // in the order the architecture lists them

  const TensorDesc& tensor(const std::string& name) const;
  // A 64-bit hash of everything above: names a model in state files.
  uint64_t fingerprint() const;
};

// "[64, 512]": tensor dimensions as messages print them.
std::string dims_text(const std::vector<int64_t>& dims);

// The first difference between what a binary was compiled for and what a
// file holds, as one line for the user, or nullopt when they match.
std::optional<std::string> describe_mismatch(const ModelDesc& compiled, const ModelDesc& file);

}  // namespace kiln
