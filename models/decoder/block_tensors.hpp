// Every tensor a transformer block of any architecture kiln knows can have,
// in one table: each architecture lists which of them its blocks hold
// (models/<arch>/describe.cpp), the description checks a GGUF against that
// list (read_decoder.cpp), the loader binds each present tensor to its field
// of LayerWeights (bind_weights.hpp), codegen gives each matrix its weight
// type (codegen/emit.cpp), kiln-synth writes random ones (codegen/synth.cpp).
// A new kind of tensor is a field below and a line in kBlockTensors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::decoder {

// Where one block's weights are, bound once at load time: into the mapped
// GGUF, into the interleaved copies made at load, or into built-in weights.
// A field the architecture does not have stays null.
struct LayerWeights {
  const float* attn_norm;
  const void* attn_q;
  const void* attn_k;
  const void* attn_v;
  const float* attn_q_bias;
  const float* attn_k_bias;
  const float* attn_v_bias;
  const float* attn_q_norm;  // per head, shared by the heads
  const float* attn_k_norm;
  const void* attn_output;
  const float* attn_post_norm;  // on the attention's output, before the residual add
  const float* ffn_norm;
  const void* ffn_gate;
  const void* ffn_up;
  const void* ffn_down;
  const float* ffn_post_norm;
};

// A size that a tensor's shape is made of, from the hyperparameters.
enum class Dim { None, Embd, QDim, KvDim, HeadDim, FF };

struct BlockTensor {
  std::string_view name;  // in the GGUF, after "blk.<layer>."
  Dim cols;               // dims[0]: a matrix's input size, a vector's length
  Dim rows;               // dims[1]: a matrix's output size; None for a vector
  // The field it is bound to: a float vector (norms, biases: always F32 in
  // the file) or a matrix of any weight type. Exactly one is set.
  const float* LayerWeights::*vector;
  const void* LayerWeights::*matrix;
};

// In the order llama.cpp's converters list them.
inline constexpr BlockTensor kBlockTensors[] = {
    {"attn_norm.weight", Dim::Embd, Dim::None, &LayerWeights::attn_norm, nullptr},
    {"attn_q.weight", Dim::Embd, Dim::QDim, nullptr, &LayerWeights::attn_q},
    {"attn_k.weight", Dim::Embd, Dim::KvDim, nullptr, &LayerWeights::attn_k},
    {"attn_v.weight", Dim::Embd, Dim::KvDim, nullptr, &LayerWeights::attn_v},
    {"attn_q.bias", Dim::QDim, Dim::None, &LayerWeights::attn_q_bias, nullptr},
    {"attn_k.bias", Dim::KvDim, Dim::None, &LayerWeights::attn_k_bias, nullptr},
    {"attn_v.bias", Dim::KvDim, Dim::None, &LayerWeights::attn_v_bias, nullptr},
    {"attn_q_norm.weight", Dim::HeadDim, Dim::None, &LayerWeights::attn_q_norm, nullptr},
    {"attn_k_norm.weight", Dim::HeadDim, Dim::None, &LayerWeights::attn_k_norm, nullptr},
    {"attn_output.weight", Dim::QDim, Dim::Embd, nullptr, &LayerWeights::attn_output},
    {"post_attention_norm.weight", Dim::Embd, Dim::None, &LayerWeights::attn_post_norm, nullptr},
    {"ffn_norm.weight", Dim::Embd, Dim::None, &LayerWeights::ffn_norm, nullptr},
    {"ffn_gate.weight", Dim::Embd, Dim::FF, nullptr, &LayerWeights::ffn_gate},
    {"ffn_up.weight", Dim::Embd, Dim::FF, nullptr, &LayerWeights::ffn_up},
    {"ffn_down.weight", Dim::FF, Dim::Embd, nullptr, &LayerWeights::ffn_down},
    {"post_ffw_norm.weight", Dim::Embd, Dim::None, &LayerWeights::ffn_post_norm, nullptr},
};

// The sizes behind Dim for one model (q_dim: n_head * head_dim, kv_dim:
// n_head_kv * head_dim, ff: the feed-forward width).
struct BlockSizes {
  int64_t embd, q_dim, kv_dim, head_dim, ff;
  constexpr int64_t operator()(Dim d) const {
    switch (d) {
      case Dim::Embd: return embd;
      case Dim::QDim: return q_dim;
      case Dim::KvDim: return kv_dim;
      case Dim::HeadDim: return head_dim;
      case Dim::FF: return ff;
      case Dim::None: break;
    }
    return 0;
  }
};

// The entry of kBlockTensors of that name; throws kiln::Error for a name
// that is not there (a mistake in an architecture's list).
const BlockTensor& block_tensor(std::string_view name);

// Its name in the GGUF, for layer `layer`.
inline std::string block_tensor_name(int layer, const BlockTensor& t) {
  return "blk." + std::to_string(layer) + "." + std::string(t.name);
}

// A matrix's role, its name without ".weight" ("attn_q"): what the forward
// pass and codegen's per-layer lists of weight types call it.
constexpr std::string_view matrix_role(const BlockTensor& t) { return t.name.substr(0, t.name.find('.')); }

}  // namespace kiln::decoder
