// One sequence of a CompiledModel (models/decoder/compiled_model.hpp), as a
// kiln::Sequence: its own KV cache and activations (allocated once here) and
// thread count; the weights are the model's, only read. Its forward call is
// a batch of one run (models/decoder/forward.hpp); SequenceBatch
// (compiled_batch.hpp) runs several sequences' caches in one pass.
#pragma once

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include <omp.h>

#include "engine/error/error.hpp"
#include "engine/model/model.hpp"
#include "kernels/team_backoff.hpp"
#include "models/decoder/kernel_step.hpp"
#include "models/decoder/forward.hpp"

namespace kiln::decoder {

template <class C, class Forward>
class CompiledModel;

// How many threads a forward pass runs on: set_threads' count and fit
// (kiln::Sequence::set_threads), shared by sequences and batches. It keeps
// their activations' attention scratch sized for that count.
template <class C>
class ForwardThreads {
 public:
  explicit ForwardThreads(AttentionScratch<C>& scratch) : scratch_(scratch) { scratch_.fit(threads_); }

  // At most kMaxThreads, and what OpenMP will start (OMP_THREAD_LIMIT).
  // Forgets what earlier passes taught the backoff.
  void set(int n, ThreadFit fit) {
    threads_ = std::clamp(n, 1, std::min(kMaxThreads, omp_get_thread_limit()));
    fit_ = fit;
    backoff_ = {};
    scratch_.fit(threads_);
  }
  int threads() const { return threads_; }

  // ThreadFit::ByWork: a thread per kLayerFlopsPerThread of a layer's
  // matrix arithmetic. A team's barriers (about six per layer) cost a few
  // microseconds each, which a thread's share of under a megaflop does not
  // win back; stories260K's 0.09 MFLOP per token and layer thus runs one
  // token on one thread and a prompt of 23 tokens or more on two. Fewer
  // while the team backs off from a core another process holds
  // (kernels/team_backoff.hpp).
  int for_tokens(int n_tokens) const {
    if (fit_ == ThreadFit::Exact) return threads_;
    return backoff_.threads(by_work(n_tokens), kernels::TeamBackoff::Clock::now());
  }

  // Runs pass(t) (a forward pass on t threads, returning its team's waits)
  // on for_tokens(n_tokens) threads, and teaches the backoff what it waited.
  template <class Pass>
  void run(int n_tokens, Pass&& pass) {
    const int wanted = by_work(n_tokens);
    const auto start = kernels::TeamBackoff::Clock::now();
    const int threads = fit_ == ThreadFit::Exact ? threads_ : backoff_.threads(wanted, start);
    const kernels::TeamWaits waits = pass(threads);
    if (fit_ == ThreadFit::ByWork)
      backoff_.record(wanted, threads, n_tokens, start, kernels::TeamBackoff::Clock::now(), waits);
  }

 private:
  // The ThreadFit::ByWork count, before any backoff.
  int by_work(int n_tokens) const {
    constexpr int64_t kLayerFlopsPerThread = 1'000'000;
    // The feed-forward's: a mixture's router and the experts a token uses, or the dense matrices.
    constexpr int64_t kFfnMacs = C::n_expert > 0
                                     ? int64_t{C::n_embd} * (C::n_expert + int64_t{3} * C::n_ff_exp * C::n_expert_used)
                                     : int64_t{3} * C::n_embd * C::n_ff;
    constexpr int64_t kLayerMacsPerToken =
        int64_t{C::n_embd} * (2 * Activations<C>::q_dim + 2 * Activations<C>::kv_dim) + kFfnMacs;
    const int64_t useful = 2 * kLayerMacsPerToken * n_tokens / kLayerFlopsPerThread;
    return static_cast<int>(std::clamp<int64_t>(useful, 1, threads_));
  }

  AttentionScratch<C>& scratch_;
  int threads_ = 1;
  ThreadFit fit_ = ThreadFit::ByWork;
  kernels::TeamBackoff backoff_;
};

// Throws kiln::Error unless n tokens at positions [pos, pos + n) fit in a
// forward pass and the cache, which holds what they attend to, and every id
// is in the vocabulary.
template <class C>
void check_forward(const KvCache<C>& cache, const int32_t* tokens, int n, int pos) {
  if (n < 1 || n > C::max_batch || pos < 0 || pos + n > C::n_ctx)
    throw Error("forward: " + std::to_string(n) + " tokens at position " + std::to_string(pos) +
                " do not fit (batch " + std::to_string(C::max_batch) + ", context " + std::to_string(C::n_ctx) + ")");
  cache.check_continues_at(pos);
  for (int i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= C::n_vocab)
      throw Error("token id " + std::to_string(tokens[i]) + " is outside the vocabulary (0.." +
                  std::to_string(C::n_vocab - 1) + ")");
}

template <class C, class Forward>
class CompiledSequence final : public kiln::Sequence {
 public:
  // The cache's rows are default-initialized: their pages are touched only when used.
  explicit CompiledSequence(const CompiledModel<C, Forward>& model)
      : model_(model), activations_(new Activations<C>), cache_(new KvCache<C>),
        kv_rows_(new Value[(kv_rows_total<true>() + kv_rows_total<kValuesBlocked>()) * KvCache<C>::kv_dim]),
        threads_(activations_->scores) {
    model.copy_rope_frequencies(*activations_);
    Value* next = kv_rows_.get();
    const auto place = [&](Value** layer, int64_t (*rows_allocated)(int64_t)) {
      for (int l = 0; l < C::n_layer; ++l) {
        layer[l] = next;
        next += rows_allocated(Forward::kv_rows[l]) * KvCache<C>::kv_dim;
      }
    };
    place(cache_->k, kernels::kv_rows_allocated<true>);
    place(cache_->v, kernels::kv_rows_allocated<kValuesBlocked>);
  }

  const Model& model() const override { return model_; }
  KvCache<C>& cache() { return *cache_; }

  void set_threads(int n, ThreadFit fit) override { threads_.set(n, fit); }
  int threads() const override { return threads_.threads(); }
  int threads_for(int n_tokens) const override { return threads_.for_tokens(n_tokens); }

  void forward(const int32_t* tokens, int n, int pos, Logits which, float* logits) override {
    check_forward<C>(*cache_, tokens, n, pos);
    const Run<C> run{tokens, cache_.get(), 0, n, pos, which};
    threads_.run(n, [&](int threads) {
      return Forward::run(*activations_, model_.weights_, {&run, 1}, logits, threads, Untimed{});
    });
    cache_->wrote(pos, n);
  }

  // forward(), with the same results, that also times every kernel call
  // where the pass makes it (models/decoder/kernel_step.hpp): the time the
  // calls of each kind took, less what timing them added
  // (KernelTimes::timing_cost). Not part of kiln::Sequence: only a program
  // that calls it (kiln-bench, through time_kernels below) compiles the
  // timed pass.
  KernelTimes time_kernels(const int32_t* tokens, int n, int pos, Logits which, float* logits) {
    check_forward<C>(*cache_, tokens, n, pos);
    KernelTimes times;
    const int threads = threads_for(n);
    times.timing_cost = timing_cost_seconds(threads);
    times.threads = threads;
    const Run<C> run{tokens, cache_.get(), 0, n, pos, which};
    Forward::run(*activations_, model_.weights_, {&run, 1}, logits, threads, Timed(times));
    cache_->wrote(pos, n);
    for (int k = 0; k < kKernelKinds; ++k) times.seconds[k] -= times.calls[k] * times.timing_cost;
    return times;
  }

  int kv_held_from() const override { return cache_->held_from; }

  void read_kv(int first_pos, int n_pos, uint8_t* out) const override {
    check_kv_range(first_pos, n_pos);
    for (int p = first_pos; p < first_pos + n_pos; ++p)
      for (int l = 0; l < C::n_layer; ++l) {
        const int64_t row = kv_row(l, p);
        Value values[KvCache<C>::kv_dim] = {};
        if (row >= 0) kernels::read_kv_row<true, KvCache<C>::kv_dim>(cache_->k[l], row, values);
        std::memcpy(out, values, kKvRowBytes);
        out += kKvRowBytes;
        if (row >= 0) kernels::read_kv_row<kValuesBlocked, KvCache<C>::kv_dim>(cache_->v[l], row, values);
        std::memcpy(out, values, kKvRowBytes);
        out += kKvRowBytes;
      }
  }

  void write_kv(int first_pos, int n_pos, const uint8_t* in, int held_from) override {
    check_kv_range(first_pos, n_pos);
    // What the rings held before first_pos stays theirs, as far as it reached it.
    const int kept_from = cache_->held_to >= first_pos ? std::min(cache_->held_from, first_pos) : first_pos;
    cache_->held_to = first_pos + n_pos;
    cache_->held_from = std::max(kept_from, std::clamp(held_from, 0, cache_->held_to));
    // Written in order, so that a ring keeps the last positions that map to
    // each of its rows; a ring's rows before held_from (zeros) are skipped.
    for (int p = first_pos; p < first_pos + n_pos; ++p)
      for (int l = 0; l < C::n_layer; ++l) {
        const int64_t row = kv_row(l, p);
        if (row >= 0) {
          Value values[KvCache<C>::kv_dim];
          std::memcpy(values, in, kKvRowBytes);
          kernels::write_kv_row<true, KvCache<C>::kv_dim>(values, cache_->k[l], row);
          std::memcpy(values, in + kKvRowBytes, kKvRowBytes);
          kernels::write_kv_row<kValuesBlocked, KvCache<C>::kv_dim>(values, cache_->v[l], row);
        }
        in += 2 * kKvRowBytes;
      }
    if constexpr (kv_ring_rows<C> > 0)
      cache_->held_from = std::max(cache_->held_from, cache_->held_to - kv_ring_rows<C>);
  }

 private:
  using Value = typename KvCache<C>::Value;
  static constexpr bool kValuesBlocked = kernels::kv_values_blocked<C::head_dim>;
  static constexpr size_t kKvRowBytes = sizeof(Value) * KvCache<C>::kv_dim;
  // Every layer's rows of keys or values, in whole blocks where they are blocked.
  template <bool Blocked>
  static constexpr int64_t kv_rows_total() {
    int64_t rows = 0;
    for (int r : Forward::kv_rows) rows += kernels::kv_rows_allocated<Blocked>(r);
    return rows;
  }

  // The row of layer l that holds position p, or -1 if a sliding-window
  // layer no longer holds it.
  int64_t kv_row(int l, int p) const {
    const int ring = Forward::kv_rows[l] < C::n_ctx ? Forward::kv_rows[l] : 0;
    if (ring == 0) return p;
    if (p < cache_->held_from || p >= cache_->held_to) return -1;
    return p % ring;
  }

  static void check_kv_range(int first_pos, int n_pos) {
    if (first_pos < 0 || n_pos < 0 || first_pos > C::n_ctx || n_pos > C::n_ctx - first_pos)
      throw Error("KV cache positions [" + std::to_string(first_pos) + ", " +
                  std::to_string(static_cast<long long>(first_pos) + n_pos) +
                  ") are outside the context of " + std::to_string(C::n_ctx));
  }

  const CompiledModel<C, Forward>& model_;
  std::unique_ptr<Activations<C>> activations_;
  std::unique_ptr<KvCache<C>> cache_;
  std::unique_ptr<Value[]> kv_rows_;  // every layer's key rows, then every layer's value rows (cache_ points into them)
  ForwardThreads<C> threads_;
};

// CompiledSequence::time_kernels for a sequence of this model, which the
// generated <name>.timed.cpp defines the model's time_kernels with.
template <class C, class Forward>
KernelTimes time_kernels(Sequence& seq, const int32_t* tokens, int n, int pos, Logits which, float* logits) {
  auto* compiled = dynamic_cast<CompiledSequence<C, Forward>*>(&seq);
  if (!compiled) throw Error("time_kernels: the sequence is not one of this model's");
  return compiled->time_kernels(tokens, n, pos, which, logits);
}

}  // namespace kiln::decoder
