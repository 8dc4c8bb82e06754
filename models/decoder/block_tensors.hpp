// Every tensor a transformer block of any architecture kiln knows can have,
// in one table: each architecture lists which of them its blocks hold
// (models/<arch>/describe.cpp), the description checks a GGUF against that
// list (read_decoder.cpp), the loader binds each present tensor to its field
// of LayerWeights (bind_weights.hpp), codegen gives each matrix its weight
// type (codegen/emit.cpp), kiln-synth writes random ones (codegen/synth.cpp).
// A new kind of tensor is a field below and a line in kBlockTensors; a
// tensor that fuses several matrices is a line in kFusedTensors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model_desc.hpp"
#include "models/describe.hpp"

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
  const float* attn_output_bias;
  const float* attn_sinks;  // a logit per head that joins its softmax with no value (gpt-oss)
  // On the attention's output, before the residual add; gpt-oss: the norm before its experts.
  const float* attn_post_norm;
  const float* ffn_norm;
  const void* ffn_gate;
  const void* ffn_up;
  const void* ffn_down;
  const float* ffn_post_norm;
  // A mixture of experts: the router, and every expert's matrices back to
  // back (n_expert matrices of one shape; models/decoder/moe.hpp).
  const void* ffn_gate_inp;
  const void* ffn_gate_exps;
  const void* ffn_up_exps;
  const void* ffn_down_exps;
  // Their biases (gpt-oss): the router's, and one vector per expert back to back.
  const float* ffn_gate_inp_bias;
  const float* ffn_gate_exps_bias;
  const float* ffn_up_exps_bias;
  const float* ffn_down_exps_bias;
  // A shared expert (Qwen2-MoE): a SwiGLU feed-forward every token runs,
  // scaled by the sigmoid of its gate, a matrix of one row.
  const void* ffn_gate_inp_shexp;
  const void* ffn_gate_shexp;
  const void* ffn_up_shexp;
  const void* ffn_down_shexp;
};

// A size that a tensor's shape is made of, from the hyperparameters
// (Experts: the number of experts, ExpertFF: one expert's feed-forward width,
// SharedFF: the shared expert's, One: a matrix of one row).
enum class Dim { None, One, Embd, QDim, KvDim, HeadDim, Heads, FF, Experts, ExpertFF, SharedFF };

struct BlockTensor {
  std::string_view name;  // in the GGUF, after "blk.<layer>."
  Dim cols;               // dims[0]: a matrix's input size, a vector's length
  Dim rows;               // dims[1]: a matrix's output size; None for a vector
  Dim stack;              // dims[2]: how many matrices of that shape it holds (Experts); None for one
  // The field it is bound to: a float vector (norms, biases: always F32 in
  // the file) or a matrix of any weight type. Exactly one is set.
  const float* LayerWeights::*vector;
  const void* LayerWeights::*matrix;
};

// In the order llama.cpp's converters list them.
inline constexpr BlockTensor kBlockTensors[] = {
    {"attn_norm.weight", Dim::Embd, Dim::None, Dim::None, &LayerWeights::attn_norm, nullptr},
    {"attn_q.weight", Dim::Embd, Dim::QDim, Dim::None, nullptr, &LayerWeights::attn_q},
    {"attn_k.weight", Dim::Embd, Dim::KvDim, Dim::None, nullptr, &LayerWeights::attn_k},
    {"attn_v.weight", Dim::Embd, Dim::KvDim, Dim::None, nullptr, &LayerWeights::attn_v},
    {"attn_q.bias", Dim::QDim, Dim::None, Dim::None, &LayerWeights::attn_q_bias, nullptr},
    {"attn_k.bias", Dim::KvDim, Dim::None, Dim::None, &LayerWeights::attn_k_bias, nullptr},
    {"attn_v.bias", Dim::KvDim, Dim::None, Dim::None, &LayerWeights::attn_v_bias, nullptr},
    {"attn_q_norm.weight", Dim::HeadDim, Dim::None, Dim::None, &LayerWeights::attn_q_norm, nullptr},
    {"attn_k_norm.weight", Dim::HeadDim, Dim::None, Dim::None, &LayerWeights::attn_k_norm, nullptr},
    {"attn_output.weight", Dim::QDim, Dim::Embd, Dim::None, nullptr, &LayerWeights::attn_output},
    {"attn_output.bias", Dim::Embd, Dim::None, Dim::None, &LayerWeights::attn_output_bias, nullptr},
    {"attn_sinks.weight", Dim::Heads, Dim::None, Dim::None, &LayerWeights::attn_sinks, nullptr},
    {"post_attention_norm.weight", Dim::Embd, Dim::None, Dim::None, &LayerWeights::attn_post_norm, nullptr},
    {"ffn_norm.weight", Dim::Embd, Dim::None, Dim::None, &LayerWeights::ffn_norm, nullptr},
    {"ffn_gate.weight", Dim::Embd, Dim::FF, Dim::None, nullptr, &LayerWeights::ffn_gate},
    {"ffn_up.weight", Dim::Embd, Dim::FF, Dim::None, nullptr, &LayerWeights::ffn_up},
    {"ffn_down.weight", Dim::FF, Dim::Embd, Dim::None, nullptr, &LayerWeights::ffn_down},
    {"post_ffw_norm.weight", Dim::Embd, Dim::None, Dim::None, &LayerWeights::ffn_post_norm, nullptr},
    {"ffn_gate_inp.weight", Dim::Embd, Dim::Experts, Dim::None, nullptr, &LayerWeights::ffn_gate_inp},
    {"ffn_gate_exps.weight", Dim::Embd, Dim::ExpertFF, Dim::Experts, nullptr, &LayerWeights::ffn_gate_exps},
    {"ffn_up_exps.weight", Dim::Embd, Dim::ExpertFF, Dim::Experts, nullptr, &LayerWeights::ffn_up_exps},
    {"ffn_down_exps.weight", Dim::ExpertFF, Dim::Embd, Dim::Experts, nullptr, &LayerWeights::ffn_down_exps},
    {"ffn_gate_inp.bias", Dim::Experts, Dim::None, Dim::None, &LayerWeights::ffn_gate_inp_bias, nullptr},
    {"ffn_gate_exps.bias", Dim::ExpertFF, Dim::Experts, Dim::None, &LayerWeights::ffn_gate_exps_bias, nullptr},
    {"ffn_up_exps.bias", Dim::ExpertFF, Dim::Experts, Dim::None, &LayerWeights::ffn_up_exps_bias, nullptr},
    {"ffn_down_exps.bias", Dim::Embd, Dim::Experts, Dim::None, &LayerWeights::ffn_down_exps_bias, nullptr},
    {"ffn_gate_inp_shexp.weight", Dim::Embd, Dim::One, Dim::None, nullptr, &LayerWeights::ffn_gate_inp_shexp},
    {"ffn_gate_shexp.weight", Dim::Embd, Dim::SharedFF, Dim::None, nullptr, &LayerWeights::ffn_gate_shexp},
    {"ffn_up_shexp.weight", Dim::Embd, Dim::SharedFF, Dim::None, nullptr, &LayerWeights::ffn_up_shexp},
    {"ffn_down_shexp.weight", Dim::SharedFF, Dim::Embd, Dim::None, nullptr, &LayerWeights::ffn_down_shexp},
};

// A tensor that holds several matrices of kBlockTensors, their rows stacked
// in the order listed: phi3's attn_qkv holds Q, K and V; its ffn_up holds the
// gate's rows, then the up projection's (llama.cpp's LLM_FFN_SWIGLU on one
// matrix: silu of the first half times the second). Each part is bound, as a
// range of the tensor's rows, to the field of the matrix it is (see
// block_matrices), so a layer reads Q, K, V, gate and up as if the file held
// them apart. Each output of a matmul is one row's dot product with the
// input (rounded to Q8 once for all the parts), so splitting the rows
// changes no value, each part is as batch- and thread-invariant as any
// matrix, and there is no scratch copy and no split kernel. A part is a row
// view of the mapped tensor (GgufTensor::rows): float parts are read in
// place, and quantized ones are interleaved each on its own at load time
// (LoadedWeights, and the packer of a weight image alike), so a part needs
// no alignment to the interleaved groups of rows (kernels/interleave.hpp).
struct FusedTensor {
  std::string_view name;                   // in the GGUF, after "blk.<layer>."
  std::span<const std::string_view> parts;  // kBlockTensors names, in row order
  // A file may hold the parts as tensors of their own instead, as llama.cpp
  // accepts for attn_qkv (create_tensor_qkv).
  bool or_separate;
};

inline constexpr std::string_view kQkvParts[] = {"attn_q.weight", "attn_k.weight", "attn_v.weight"};
inline constexpr std::string_view kGateUpParts[] = {"ffn_gate.weight", "ffn_up.weight"};
inline constexpr FusedTensor kFusedTensors[] = {
    {"attn_qkv.weight", kQkvParts, true},
    {"ffn_up.weight", kGateUpParts, false},
};

// The sizes behind Dim for one model (q_dim: n_head * head_dim, kv_dim:
// n_head_kv * head_dim, ff: the feed-forward width; experts and expert_ff 0
// in a dense model, shared_ff 0 without a shared expert).
struct BlockSizes {
  int64_t embd, q_dim, kv_dim, head_dim, heads, ff, experts, expert_ff, shared_ff;
  constexpr int64_t operator()(Dim d) const {
    switch (d) {
      case Dim::One: return 1;
      case Dim::Embd: return embd;
      case Dim::QDim: return q_dim;
      case Dim::KvDim: return kv_dim;
      case Dim::HeadDim: return head_dim;
      case Dim::Heads: return heads;
      case Dim::FF: return ff;
      case Dim::Experts: return experts;
      case Dim::ExpertFF: return expert_ff;
      case Dim::SharedFF: return shared_ff;
      case Dim::None: break;
    }
    return 0;
  }
};

BlockSizes block_sizes(const Hyperparams& hp);

// The entry of kBlockTensors (kFusedTensors) of that name; throws kiln::Error
// for a name that is not there (a mistake in an architecture's list).
const BlockTensor& block_tensor(std::string_view name);
const FusedTensor& fused_tensor(std::string_view name);

// The shape of a block tensor: dims[0], dims[1] where it has one, dims[2]
// where it stacks matrices.
std::vector<int64_t> tensor_dims(const BlockTensor& t, const BlockSizes& size);

// The shape of a matrix that stacks the rows of these kBlockTensors matrices
// (a fused tensor's parts, or one matrix): their input size, their rows together.
std::vector<int64_t> stacked_dims(std::span<const std::string_view> matrices, const BlockSizes& size);

// A block tensor's name in the GGUF, for layer `layer`.
inline std::string block_tensor_name(int layer, std::string_view name) {
  return "blk." + std::to_string(layer) + "." + std::string(name);
}

// Where one matrix of a block is in a model's file: the whole tensor
// `tensor`, or `rows` of it when that tensor is fused.
struct MatrixSource {
  const BlockTensor* matrix;  // the kBlockTensors entry it is (its field, its role)
  std::string tensor;         // the full name in the GGUF
  std::optional<RowRange> rows;
};

// Every matrix of block `layer` of the model `d` (of architecture `arch`),
// in its list's order: where the loader binds each field from, and what
// weight type codegen gives each role.
std::vector<MatrixSource> block_matrices(const ModelDesc& d, const Architecture& arch, int layer);

// A matrix's role, its name without ".weight" ("attn_q"): what the forward
// pass and codegen's per-layer lists of weight types call it.
constexpr std::string_view matrix_role(const BlockTensor& t) { return t.name.substr(0, t.name.find('.')); }

}  // namespace kiln::decoder
