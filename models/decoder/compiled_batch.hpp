// A CompiledModel's kiln::SequenceBatch: its own activations and thread
// count, and the run list (models/decoder/forward.hpp) that one forward pass
// over several sequences' caches is given, sized once for max_batch runs.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/model/model.hpp"
#include "models/decoder/kernel_step.hpp"
#include "models/decoder/compiled_sequence.hpp"
#include "models/decoder/forward.hpp"

namespace kiln::decoder {

template <class C, class Forward>
class CompiledBatch final : public kiln::SequenceBatch {
 public:
  explicit CompiledBatch(const CompiledModel<C, Forward>& model)
      : model_(model), activations_(new Activations<C>), threads_(activations_->scores) {
    model.copy_rope_frequencies(*activations_);
    runs_.reserve(C::max_batch);  // every run holds a token
  }

  void set_threads(int n, ThreadFit fit) override { threads_.set(n, fit); }
  int threads() const override { return threads_.threads(); }

  void forward(std::span<const SequenceTokens> parts, float* logits) override {
    check_parts(parts);
    runs_.clear();
    int first = 0;
    for (const SequenceTokens& p : parts) {
      runs_.push_back({p.tokens, &static_cast<CompiledSequence<C, Forward>*>(p.sequence)->cache(), first, p.n, p.pos,
                       p.which});
      first += p.n;
    }
    threads_.run(first, [&](int threads) {
      return Forward::run(*activations_, model_.weights_, std::span<const Run<C>>(runs_), logits, threads, Untimed{});
    });
    for (const Run<C>& r : runs_) r.cache->wrote(r.pos, r.n);
  }

 private:
  void check_parts(std::span<const SequenceTokens> parts) const {
    if (parts.empty()) throw Error("batched forward: no sequences given");
    int total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const SequenceTokens& p = parts[i];
      if (!p.sequence || &p.sequence->model() != &model_)
        throw Error("batched forward: part " + std::to_string(i) + " is not a sequence of this batch's model");
      for (size_t j = 0; j < i; ++j)
        if (parts[j].sequence == p.sequence)
          throw Error("batched forward: parts " + std::to_string(j) + " and " + std::to_string(i) +
                      " are the same sequence");
      check_forward<C>(static_cast<CompiledSequence<C, Forward>*>(p.sequence)->cache(), p.tokens, p.n, p.pos);
      total += p.n;
      if (total > C::max_batch)
        throw Error("batched forward: more than " + std::to_string(C::max_batch) + " tokens (the batch size)");
    }
  }

  const CompiledModel<C, Forward>& model_;
  std::unique_ptr<Activations<C>> activations_;
  std::vector<Run<C>> runs_;
  ForwardThreads<C> threads_;
};

}  // namespace kiln::decoder
