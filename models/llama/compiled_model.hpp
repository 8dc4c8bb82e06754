// A llama model compiled by codegen, as a kiln::Model: it maps the GGUF,
// checks that the file is the model the code was generated for and binds the
// weight pointers, which its sequences (models/llama/compiled_sequence.hpp,
// each owning a fixed-size State) then only read. `Forward::run` is the
// generated straight-line forward pass, a template over how each kernel call
// is run (models/kernel_step.hpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "engine/gguf.hpp"
#include "engine/model_fingerprint.hpp"
#include "models/describe.hpp"
#include "models/loaded_weights.hpp"
#include "models/kernel_step.hpp"
#include "models/llama/compiled_sequence.hpp"
#include "models/llama/forward.hpp"

namespace kiln::llama {

template <class C, class Forward>
class CompiledModel final : public kiln::Model {
 public:
  CompiledModel(const ModelDesc& compiled, const std::string& path)
      : desc_(compiled), file_(GgufFile::open(path)), tokenizer_(Tokenizer::from_gguf(file_)) {
    if (auto diff = describe_mismatch(compiled, describe_model(file_)))
      throw Error(path + " does not match this binary: " + *diff);
    if (tokenizer_.n_vocab() != C::n_vocab)
      throw Error(path + ": the tokenizer has " + std::to_string(tokenizer_.n_vocab()) + " tokens, the model " +
                  std::to_string(C::n_vocab));
    // Everything that reads the file comes before bind_weights, which hands
    // the pages of the matrices it copies back (models/loaded_weights.hpp).
    fingerprint_ = model_fingerprint(desc_, file_);
    set_rope_frequencies();
    bind_weights();
  }

  const ModelDesc& desc() const override { return desc_; }
  uint64_t fingerprint() const override { return fingerprint_; }
  const std::string& gguf_path() const override { return file_.path(); }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int n_ctx() const override { return C::n_ctx; }
  int max_batch() const override { return C::max_batch; }
  int n_vocab() const override { return C::n_vocab; }
  // The element type is the build's choice (Config::kv_type); saved states
  // record it, so a state written by an F32-cache binary is refused by an
  // F16-cache one of the same model, and the other way round.
  KvLayout kv_layout() const override {
    return {C::n_layer, State<C>::kv_dim, std::string(traits_of(C::kv_type).name),
            static_cast<int>(sizeof(typename State<C>::KvValue))};
  }

  std::unique_ptr<Sequence> new_sequence() const override {
    return std::make_unique<CompiledSequence<C, Forward>>(*this);
  }

 private:
  friend class CompiledSequence<C, Forward>;

  const void* data(const std::string& name) const { return file_.find_tensor(name)->data; }
  const float* vector(const std::string& name) { return weights_copies_.vector(*file_.find_tensor(name)); }
  const void* matrix(const std::string& name) { return weights_copies_.matrix(*file_.find_tensor(name)); }

  // Vectors first, then matrices (see models/loaded_weights.hpp).
  void bind_weights() {
    weights_.token_embd = data("token_embd.weight");
    weights_.output_norm = vector("output_norm.weight");
    for (int l = 0; l < C::n_layer; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      LayerWeights& w = weights_.layers[l];
      w.attn_norm = vector(b + "attn_norm.weight");
      w.ffn_norm = vector(b + "ffn_norm.weight");
      if constexpr (C::qkv_bias) {
        w.attn_q_bias = vector(b + "attn_q.bias");
        w.attn_k_bias = vector(b + "attn_k.bias");
        w.attn_v_bias = vector(b + "attn_v.bias");
      }
    }
    weights_.output = matrix(C::tied_output ? "token_embd.weight" : "output.weight");
    for (int l = 0; l < C::n_layer; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      LayerWeights& w = weights_.layers[l];
      w.attn_q = matrix(b + "attn_q.weight");
      w.attn_k = matrix(b + "attn_k.weight");
      w.attn_v = matrix(b + "attn_v.weight");
      w.attn_output = matrix(b + "attn_output.weight");
      w.ffn_gate = matrix(b + "ffn_gate.weight");
      w.ffn_up = matrix(b + "ffn_up.weight");
      w.ffn_down = matrix(b + "ffn_down.weight");
    }
  }

  // Each rotated pair's angle per position: base^(-2i/n_rot), times the linear
  // scaling factor, divided by the pair's Llama 3.1 frequency factor if any.
  // Folding them in here leaves the RoPE kernel one multiply per angle.
  void set_rope_frequencies() {
    float* inv_freq = rope_inv_freq_;
    kernels::rope_inv_freq(C::rope_base, C::n_rot, inv_freq);
    for (int i = 0; i < C::n_rot / 2; ++i) {
      inv_freq[i] *= C::rope_freq_scale;
      if constexpr (C::rope_freqs) {
        const float factor = static_cast<const float*>(data("rope_freqs.weight"))[i];
        if (!(factor > 0.0f && factor < 1e30f))
          throw Error(file_.path() + ": rope_freqs.weight[" + std::to_string(i) + "] is " + std::to_string(factor) +
                      ", a frequency factor must be positive");
        inv_freq[i] /= factor;
      }
    }
  }

  ModelDesc desc_;
  GgufFile file_;
  LoadedWeights weights_copies_;  // declared after file_: filled from it
  Tokenizer tokenizer_;
  uint64_t fingerprint_ = 0;
  Weights<C> weights_{};
  float rope_inv_freq_[C::n_rot / 2] = {};  // copied into each sequence's State
};

}  // namespace kiln::llama
