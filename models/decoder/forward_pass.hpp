// Forward<C, Layers>: the whole forward pass of a compiled model over a
// batch of runs (one per sequence). Embedding, then every layer of the
// compile-time list in order, each through its architecture's layer
// (C::Arch::layer), then the final norm and classifier for the tokens whose
// logits are wanted. Codegen names it for one model; the generated code
// holds no statements of its own.
#pragma once

#include <span>
#include <string>

#include "kernels/activation.hpp"
#include "kernels/team.hpp"
#include "models/decoder/blocks.hpp"
#include "models/decoder/forward.hpp"

namespace kiln::decoder {

// Final norm and classifier, only for the tokens whose logits are wanted:
// `logits` receives their rows in batch order (capped as the model says).
template <class C, class Step>
void output(Activations<C>& s, const Weights<C>& w, std::span<const Run<C>> runs, float* logits, Step step) {
  const int count = gather_wanted_rows<C>(s, runs);
  if (count == 0) return;
  const auto in = normalized<kernels::reads_q8(C::output_type)>(s, w.output_norm, count, step);
  step.run(KernelKind::Matmul, kernels::matmul<C::output_type, C::n_vocab, C::n_embd>, w.output, in, logits, count);
  if constexpr (C::final_logit_softcap > 0.0f)
    step.run(KernelKind::Other, kernels::softcap<C::n_vocab>, logits, count, C::final_logit_softcap);
}

template <class C, class Layers>
struct Forward;

template <class C, class... L>
struct Forward<C, LayerList<L...>> {
  // The types a pass reads and writes, by the names generated code declares run with.
  using Activations = decoder::Activations<C>;
  using Weights = decoder::Weights<C>;
  using Run = decoder::Run<C>;

  // Each layer's rows in a sequence's cache (KvCache): its ring, or a row per position.
  static constexpr int kv_rows[] = {(kv_ring<C>(L::kind) > 0 ? kv_ring<C>(L::kind) : C::n_ctx)...};
  static_assert([] {
    int i = 0;
    return ((L::index == i++) && ...);
  }(), "the layer list is in index order");

  // One thread runs the layers without a team: the kernels' work-sharing
  // loops then run serially and their barriers cost nothing, where a team of
  // one would still make a system call at every barrier. Returns what a
  // team waited at its barriers (kernels/team_backoff.hpp).
  template <class Step>
  static kernels::TeamWaits run(Activations& s, const Weights& w, std::span<const Run> runs, float* logits, int threads,
                                Step step) {
    if (threads > s.scores.threads())
      throw Error("internal: a pass on " + std::to_string(threads) + " threads with attention scratch for " +
                  std::to_string(s.scores.threads()));
    if (threads == 1) {
      layers(s, w, runs, logits, step);
      return {};
    }
    return kernels::run_team(threads, [&] { layers(s, w, runs, logits, step); });
  }

 private:
  template <class Step>
  static void layers(Activations& s, const Weights& w, std::span<const Run> runs, float* logits, Step step) {
    embed<C>(s, w, runs, step);
    const int n = batch_tokens(runs);
    if constexpr (requires { C::Arch::embedding_scale; })
      step.run(KernelKind::Other, kernels::scale<C::n_embd>, &s.x[0][0], n, C::Arch::embedding_scale(C::n_embd));
    (C::Arch::layer(Pass<C, L, Step>{s, runs, n, step}, w.layers[L::index]), ...);
    output<C>(s, w, runs, logits, step);
  }
};

}  // namespace kiln::decoder
