// A model compiled by codegen, as a kiln::Model: it maps the GGUF (or
// reads the weights built into the program), checks that it is the model the
// code was generated for and binds the weight pointers, which its sequences
// (models/decoder/compiled_sequence.hpp, each owning a fixed-size KV cache and
// activations) and batches (compiled_batch.hpp) then only read. `Forward::run` is the generated straight-line forward pass, a
// template over how each kernel call is run (models/decoder/kernel_step.hpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model_fingerprint.hpp"
#include "kernels/rope.hpp"
#include "models/decoder/bind_weights.hpp"
#include "models/decoder/compiled_batch.hpp"
#include "models/decoder/compiled_sequence.hpp"
#include "models/decoder/forward.hpp"
#include "models/decoder/kernel_step.hpp"
#include "models/describe.hpp"
#include "models/weight_image.hpp"
#include "models/weight_sources.hpp"

namespace kiln::decoder {

template <class C, class Forward>
class CompiledModel final : public kiln::Model {
 public:
  // Maps a GGUF holding this model's weights; throws kiln::Error if it is
  // not the model the code was generated for.
  CompiledModel(const ModelDesc& compiled, const std::string& path)
      : desc_(compiled), file_(GgufFile::open(path)), tokenizer_(Tokenizer::from_gguf(file_)) {
    check_file(compiled);
    // Everything that reads the file comes before binding, which hands the
    // pages of the matrices it copies back (models/loaded_weights.hpp).
    fingerprint_ = model_fingerprint(desc_, file_);
    file_weights_ = std::make_unique<GgufWeights>(file_);
    set_rope_frequencies(bind_weights<C>(weights_, *file_weights_, desc_));
  }

  // The weights built into the program (models/weight_image.hpp), read where
  // they are: nothing is copied or rearranged.
  CompiledModel(const ModelDesc& compiled, std::span<const uint8_t> image, const std::string& name)
      : CompiledModel(compiled, WeightImage(image, name)) {}

  const ModelDesc& desc() const override { return desc_; }
  uint64_t fingerprint() const override { return fingerprint_; }
  const std::string& gguf_path() const override { return file_.path(); }
  const GgufFile& gguf() const override { return file_; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int n_ctx() const override { return C::n_ctx; }
  int max_batch() const override { return C::max_batch; }
  int n_vocab() const override { return C::n_vocab; }
  // The element type is the build's choice (Config::kv_type); saved states
  // record it, so a state written by an F32-cache binary is refused by an
  // F16-cache one of the same model, and the other way round.
  KvLayout kv_layout() const override {
    return {C::n_layer, Activations<C>::kv_dim, std::string(traits_of(C::kv_type).name),
            static_cast<int>(sizeof(typename KvCache<C>::Value))};
  }

  int sliding_window() const override { return C::n_swa; }
  int kv_ring_rows() const override { return decoder::kv_ring_rows<C>; }

  std::unique_ptr<Sequence> new_sequence() const override {
    return std::make_unique<CompiledSequence<C, Forward>>(*this);
  }
  std::unique_ptr<SequenceBatch> new_batch() const override {
    return std::make_unique<CompiledBatch<C, Forward>>(*this);
  }

  void copy_rope_frequencies(Activations<C>& a) const {
    std::copy(std::begin(rope_inv_freq_), std::end(rope_inv_freq_), a.rope_inv_freq);
    std::copy(std::begin(rope_inv_freq_swa_), std::end(rope_inv_freq_swa_), a.rope_inv_freq_swa);
  }

 private:
  friend class CompiledSequence<C, Forward>;
  friend class CompiledBatch<C, Forward>;

  CompiledModel(const ModelDesc& compiled, WeightImage image)
      : desc_(compiled), file_(GgufFile::from_header(image.gguf_header(), image.name())),
        tokenizer_(Tokenizer::from_gguf(file_)) {
    check_file(compiled);
    fingerprint_ = model_fingerprint(desc_, image.file_hash());  // the same as from the GGUF it was packed from
    ImageWeights weights(image);
    set_rope_frequencies(bind_weights<C>(weights_, weights, desc_));
  }

  void check_file(const ModelDesc& compiled) const {
    if (auto diff = describe_mismatch(compiled, describe_model(file_)))
      throw Error(file_.path() + " does not match this binary: " + *diff);
    if (tokenizer_.n_vocab() != C::n_vocab)
      throw Error(file_.path() + ": the tokenizer has " + std::to_string(tokenizer_.n_vocab()) + " tokens, the model " +
                  std::to_string(C::n_vocab));
  }

  // Each rotated pair's angle per position: base^(-2i/n_rot), times the linear
  // scaling factor (YaRN's: one per pair), divided by the pair's frequency
  // factor if the model has them (`factors`, null without: Llama 3.1's, or
  // LongRoPE's long or short
  // ones, rope_factors_tensor). Folding them in here leaves the RoPE kernel
  // one multiply per angle. Sliding-window layers have a base of their own
  // and no scaling, but for YaRN's, which llama.cpp applies to every layer
  // (gpt-oss; gemma3 refuses YaRN).
  void set_rope_frequencies(const float* factors) {
    float* inv_freq = rope_inv_freq_;
    kernels::rope_inv_freq(C::rope_base, C::n_rot, inv_freq);
    float scale[C::n_rot / 2];
    std::fill(std::begin(scale), std::end(scale), C::rope_freq_scale);
    if constexpr (C::rope_yarn)
      kernels::rope_yarn_factors(C::n_rot, C::rope_base, C::rope_freq_scale, C::n_ctx_orig, C::rope_yarn_beta_fast,
                                 C::rope_yarn_beta_slow, scale);
    for (int i = 0; i < C::n_rot / 2; ++i) {
      inv_freq[i] *= scale[i];
      if (factors) {
        const float factor = factors[i];
        if (!(factor > 0.0f && factor < 1e30f))
          throw Error(file_.path() + ": " + rope_factors_tensor(C::rope_freqs, C::longrope, C::n_ctx, C::n_ctx_orig) +
                      "[" + std::to_string(i) + "] is " + std::to_string(factor) +
                      ", a frequency factor must be positive");
        inv_freq[i] /= factor;
      }
    }
    if constexpr (C::n_swa > 0) {
      kernels::rope_inv_freq(C::rope_base_swa, C::n_rot, rope_inv_freq_swa_);
      if constexpr (C::rope_yarn) {
        kernels::rope_yarn_factors(C::n_rot, C::rope_base_swa, C::rope_freq_scale, C::n_ctx_orig,
                                   C::rope_yarn_beta_fast, C::rope_yarn_beta_slow, scale);
        for (int i = 0; i < C::n_rot / 2; ++i) rope_inv_freq_swa_[i] *= scale[i];
      }
    }
  }

  ModelDesc desc_;
  GgufFile file_;  // for built-in weights: the metadata and tensor directory, no tensor data
  std::unique_ptr<GgufWeights> file_weights_;  // the copies made from file_, if the weights come from a GGUF
  Tokenizer tokenizer_;
  uint64_t fingerprint_ = 0;
  Weights<C> weights_{};
  // Copied into each sequence's and batch's activations.
  float rope_inv_freq_[C::n_rot / 2] = {};
  float rope_inv_freq_swa_[C::n_rot / 2] = {};
};

}  // namespace kiln::decoder
