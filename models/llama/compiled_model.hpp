// A llama model compiled by codegen, as a kiln::Model: it maps the GGUF,
// checks that the file is the model the code was generated for and binds the
// weight pointers, which its sequences (CompiledSequence, each owning a
// fixed-size State) then only read. `Forward::run` is the generated
// straight-line forward pass, a template over how each kernel call is run
// (models/kernel_step.hpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include <omp.h>

#include "engine/gguf.hpp"
#include "engine/model_fingerprint.hpp"
#include "models/describe.hpp"
#include "models/loaded_weights.hpp"
#include "models/kernel_step.hpp"
#include "models/llama/forward.hpp"

namespace kiln::llama {

template <class C, class Forward>
class CompiledSequence;

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

// One sequence on a CompiledModel: its own State (KV cache and activations)
// and thread count; the weights are the model's, read only.
template <class C, class Forward>
class CompiledSequence final : public kiln::Sequence {
 public:
  explicit CompiledSequence(const CompiledModel<C, Forward>& model)
      : model_(model), state_(new State<C>) {  // default-initialized: cache pages are touched only when used
    std::copy(std::begin(model.rope_inv_freq_), std::end(model.rope_inv_freq_), state_->rope_inv_freq);
  }

  const Model& model() const override { return model_; }

  // At most the attention scratch's rows, and what OpenMP will start (OMP_THREAD_LIMIT).
  void set_threads(int n, ThreadFit fit) override {
    threads_ = std::clamp(n, 1, std::min(kMaxThreads, omp_get_thread_limit()));
    fit_ = fit;
  }
  int threads() const override { return threads_; }

  // ThreadFit::ByWork: a thread per kLayerFlopsPerThread of a layer's
  // matrix arithmetic. A team's barriers (about six per layer) cost a few
  // microseconds each, which a thread's share of under a megaflop does not
  // win back; stories260K's 0.09 MFLOP per token and layer thus runs one
  // token on one thread and a prompt of 23 tokens or more on two.
  int threads_for(int n_tokens) const override {
    if (fit_ == ThreadFit::Exact) return threads_;
    constexpr int64_t kLayerFlopsPerThread = 1'000'000;
    constexpr int64_t kLayerMacsPerToken = int64_t{C::n_embd} * (2 * State<C>::q_dim + 2 * State<C>::kv_dim) +
                                           int64_t{3} * C::n_embd * C::n_ff;
    const int64_t useful = 2 * kLayerMacsPerToken * n_tokens / kLayerFlopsPerThread;
    return static_cast<int>(std::clamp<int64_t>(useful, 1, threads_));
  }

  void forward(const int32_t* tokens, int n, int pos, Logits which, float* logits) override {
    check_forward(tokens, n, pos);
    Forward::run(*state_, model_.weights_, tokens, n, pos, which, logits, threads_for(n), Untimed{});
  }

  KernelTimes time_kernels(const int32_t* tokens, int n, int pos, Logits which, float* logits) override {
    check_forward(tokens, n, pos);
    KernelTimes times;
    const int threads = threads_for(n);
    times.timing_cost = timing_cost_seconds(threads);
    Forward::run(*state_, model_.weights_, tokens, n, pos, which, logits, threads, Timed(times));
    for (int k = 0; k < kKernelKinds; ++k) times.seconds[k] -= times.calls[k] * times.timing_cost;
    return times;
  }

  void read_kv(int first_pos, int n_pos, uint8_t* out) const override {
    check_kv_range(first_pos, n_pos);
    for (int p = first_pos; p < first_pos + n_pos; ++p)
      for (int l = 0; l < C::n_layer; ++l) {
        std::memcpy(out, state_->k_cache[l][p], kKvRowBytes);
        std::memcpy(out + kKvRowBytes, state_->v_cache[l][p], kKvRowBytes);
        out += 2 * kKvRowBytes;
      }
  }

  void write_kv(int first_pos, int n_pos, const uint8_t* in) override {
    check_kv_range(first_pos, n_pos);
    for (int p = first_pos; p < first_pos + n_pos; ++p)
      for (int l = 0; l < C::n_layer; ++l) {
        std::memcpy(state_->k_cache[l][p], in, kKvRowBytes);
        std::memcpy(state_->v_cache[l][p], in + kKvRowBytes, kKvRowBytes);
        in += 2 * kKvRowBytes;
      }
  }

 private:
  static constexpr size_t kKvRowBytes = sizeof(State<C>::k_cache[0][0]);

  static void check_forward(const int32_t* tokens, int n, int pos) {
    if (n < 1 || n > C::max_batch || pos < 0 || pos + n > C::n_ctx)
      throw Error("forward: " + std::to_string(n) + " tokens at position " + std::to_string(pos) +
                  " do not fit (batch " + std::to_string(C::max_batch) + ", context " + std::to_string(C::n_ctx) + ")");
    for (int i = 0; i < n; ++i)
      if (tokens[i] < 0 || tokens[i] >= C::n_vocab)
        throw Error("token id " + std::to_string(tokens[i]) + " is outside the vocabulary (0.." +
                    std::to_string(C::n_vocab - 1) + ")");
  }

  static void check_kv_range(int first_pos, int n_pos) {
    if (first_pos < 0 || n_pos < 0 || first_pos > C::n_ctx || n_pos > C::n_ctx - first_pos)
      throw Error("KV cache positions [" + std::to_string(first_pos) + ", " +
                  std::to_string(static_cast<long long>(first_pos) + n_pos) +
                  ") are outside the context of " + std::to_string(C::n_ctx));
  }

  const CompiledModel<C, Forward>& model_;
  std::unique_ptr<State<C>> state_;
  int threads_ = 1;
  ThreadFit fit_ = ThreadFit::ByWork;
};

}  // namespace kiln::llama
