// The tensors of one transformer block of the llama family, in one table:
// the description checks a GGUF against it (models/decoder_rules.cpp), the
// loader binds each tensor to its field of LayerWeights (bind_weights.hpp),
// codegen gives each matrix its weight type (codegen/emit.cpp), and
// kiln-synth writes a random model from it (codegen/synth.cpp). A new tensor
// is a field below and a line in kBlockTensors, plus the forward-pass code
// that reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::llama {

// Where one block's weights are, bound once at load time: into the mapped
// GGUF, into the interleaved copies made at load, or into built-in weights.
struct LayerWeights {
  const float* attn_norm;
  const void* attn_q;
  const void* attn_k;
  const void* attn_v;
  const float* attn_q_bias;  // only with biases on q, k, v (qwen2)
  const float* attn_k_bias;
  const float* attn_v_bias;
  const void* attn_output;
  const float* ffn_norm;
  const void* ffn_gate;
  const void* ffn_up;
  const void* ffn_down;
};

// A size that a tensor's shape is made of, from the hyperparameters.
enum class Dim { None, Embd, QDim, KvDim, FF };

// When a block has the tensor.
enum class Presence { Always, QkvBias };

struct BlockTensor {
  std::string_view name;  // in the GGUF, after "blk.<layer>."
  Dim cols;               // dims[0]: a matrix's input size, a vector's length
  Dim rows;               // dims[1]: a matrix's output size; None for a vector
  Presence presence;
  // The field it is bound to: a float vector (norms, biases: always F32 in
  // the file) or a matrix of any weight type. Exactly one is set.
  const float* LayerWeights::*vector;
  const void* LayerWeights::*matrix;
};

// In the order the GGUF files of llama.cpp list them.
inline constexpr BlockTensor kBlockTensors[] = {
    {"attn_norm.weight", Dim::Embd, Dim::None, Presence::Always, &LayerWeights::attn_norm, nullptr},
    {"attn_q.weight", Dim::Embd, Dim::QDim, Presence::Always, nullptr, &LayerWeights::attn_q},
    {"attn_k.weight", Dim::Embd, Dim::KvDim, Presence::Always, nullptr, &LayerWeights::attn_k},
    {"attn_v.weight", Dim::Embd, Dim::KvDim, Presence::Always, nullptr, &LayerWeights::attn_v},
    {"attn_q.bias", Dim::QDim, Dim::None, Presence::QkvBias, &LayerWeights::attn_q_bias, nullptr},
    {"attn_k.bias", Dim::KvDim, Dim::None, Presence::QkvBias, &LayerWeights::attn_k_bias, nullptr},
    {"attn_v.bias", Dim::KvDim, Dim::None, Presence::QkvBias, &LayerWeights::attn_v_bias, nullptr},
    {"attn_output.weight", Dim::QDim, Dim::Embd, Presence::Always, nullptr, &LayerWeights::attn_output},
    {"ffn_norm.weight", Dim::Embd, Dim::None, Presence::Always, &LayerWeights::ffn_norm, nullptr},
    {"ffn_gate.weight", Dim::Embd, Dim::FF, Presence::Always, nullptr, &LayerWeights::ffn_gate},
    {"ffn_up.weight", Dim::Embd, Dim::FF, Presence::Always, nullptr, &LayerWeights::ffn_up},
    {"ffn_down.weight", Dim::FF, Dim::Embd, Presence::Always, nullptr, &LayerWeights::ffn_down},
};

// The sizes behind Dim for one model (q_dim: n_head * head_dim, kv_dim:
// n_head_kv * head_dim, ff: the feed-forward width).
struct BlockSizes {
  int64_t embd, q_dim, kv_dim, ff;
  constexpr int64_t operator()(Dim d) const {
    switch (d) {
      case Dim::Embd: return embd;
      case Dim::QDim: return q_dim;
      case Dim::KvDim: return kv_dim;
      case Dim::FF: return ff;
      case Dim::None: break;
    }
    return 0;
  }
};

constexpr bool is_present(const BlockTensor& t, bool qkv_bias) {
  return t.presence == Presence::Always || (t.presence == Presence::QkvBias && qkv_bias);
}

// Its name in the GGUF, for layer `layer`.
inline std::string block_tensor_name(int layer, const BlockTensor& t) {
  return "blk." + std::to_string(layer) + "." + std::string(t.name);
}

// A matrix's role, its name without ".weight" ("attn_q"): what the forward
// pass and codegen's per-layer lists of weight types call it.
constexpr std::string_view matrix_role(const BlockTensor& t) { return t.name.substr(0, t.name.find('.')); }

}  // namespace kiln::llama
