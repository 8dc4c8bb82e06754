// The llama forward pass, written once as templates over a compile-time
// configuration. Codegen instantiates it for one model: `Config` carries the
// hyperparameters and sizes, each layer's `Types` the weight type of each of
// its tensors, so every kernel call below is resolved at compile time.
//
// All functions here run inside the single OpenMP parallel region that the
// generated forward opens (or, on one thread, outside any); every kernel shares out its own work and ends
// with a barrier (unless marked Sync::NoWait), so the calls simply follow
// each other. Each call goes through a `Step` policy (models/kernel_step.hpp):
// Untimed runs it, Timed measures it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

#include "engine/model.hpp"
#include "kernels/activation.hpp"
#include "kernels/attention.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/matmul.hpp"
#include "kernels/norm.hpp"
#include "kernels/q8_activations.hpp"
#include "kernels/rope.hpp"
#include "models/kernel_step.hpp"
#include "models/llama/block_tensors.hpp"

namespace kiln::llama {

// Upper bound on OpenMP threads (sizes the per-thread attention scratch).
inline constexpr int kMaxThreads = 64;

template <class C>
struct Weights {
  const void* token_embd;
  const float* output_norm;
  const void* output;  // token_embd when the output matrix is tied
  LayerWeights layers[C::n_layer];
};

// One sequence's keys and values, position by position, in the build's
// cache type. Allocated once per sequence (CompiledSequence).
template <class C>
struct KvCache {
  static constexpr int kv_dim = C::n_head_kv * C::head_dim;
  using Value = kernels::CacheValue<C::kv_type>;  // the cache's element type, chosen at build time

  alignas(64) Value k[C::n_layer][C::n_ctx][kv_dim];
  alignas(64) Value v[C::n_layer][C::n_ctx][kv_dim];
};

// One sequence's part of a batch: the batch's tokens [first, first + n)
// (ids at `tokens`) sit at positions [pos, pos + n) of `cache`, and `which`
// of their logits are wanted. A batch is a list of runs in token order, each
// of another sequence; a single sequence's forward call is a batch of one run.
template <class C>
struct Run {
  const int32_t* tokens;
  KvCache<C>* cache;
  int first, n, pos;
  Logits which;
};

template <class C>
int batch_tokens(std::span<const Run<C>> runs) {
  return runs.back().first + runs.back().n;
}

// The activations of one batch, at sizes fixed by the configuration: what a
// forward pass writes besides the runs' caches. Every token's row is
// computed from that token's row alone (or its own sequence's cache), so a
// token's results do not depend on what else is in the batch.
template <class C>
struct Activations {
  static constexpr int q_dim = C::n_head * C::head_dim;
  static constexpr int kv_dim = KvCache<C>::kv_dim;
  // The widest matmul input, in whole Q8 blocks.
  static constexpr int q8_cols = (std::max({C::n_embd, q_dim, C::n_ff}) + 31) / 32 * 32;

  alignas(64) float x[C::max_batch][C::n_embd];   // residual stream
  alignas(64) float xn[C::max_batch][C::n_embd];  // normalized block input
  alignas(64) float q[C::max_batch][q_dim];
  alignas(64) float att[C::max_batch][q_dim];     // attention output before the projection
  alignas(64) float gate[C::max_batch][C::n_ff];
  alignas(64) float up[C::max_batch][C::n_ff];
  // The current matmul input rounded to Q8 blocks, for the integer matmul's weights
  // ([n][cols] packed for whichever input width is current).
  alignas(64) int8_t q8[C::max_batch * q8_cols];
  alignas(64) float q8_scale[C::max_batch * q8_cols / 32];
  alignas(64) int32_t q8_sum[C::max_batch * q8_cols / kernels::kQ8HalfElems];
  // This batch's keys and values in float, until RoPE is applied and they are stored in the caches.
  alignas(64) float k_new[C::max_batch][kv_dim];
  alignas(64) float v_new[C::max_batch][kv_dim];
  // Attention scratch: rows of scores per thread.
  alignas(64) float scores[kMaxThreads][kernels::kAttentionScratchRows<C::n_head, C::n_head_kv>][C::n_ctx];
  float rope_inv_freq[C::n_rot / 2];

  // Where tokens from first_token on of an input cols wide are rounded to.
  kernels::Q8Out q8_out(int first_token, int cols) {
    return {q8 + first_token * cols, q8_scale + first_token * cols / 32, q8_sum + first_token * cols / kernels::kQ8HalfElems};
  }
  // The input at f (tokens from first_token on, cols wide), in both forms.
  kernels::MatmulInput input(const float* f, int first_token, int cols) {
    const kernels::Q8Out rounded = q8_out(first_token, cols);
    return {f, {rounded.qs, rounded.d, rounded.sum}};
  }
};

// Whether any of the matmuls that read an input need it rounded to Q8 blocks.
template <TensorType... Consumers>
inline constexpr bool any_reads_q8 = (kernels::reads_q8(Consumers) || ...);

template <class C, class Step>
void embed(Activations<C>& s, const Weights<C>& w, std::span<const Run<C>> runs, Step step) {
  for (const Run<C>& r : runs)
    step.run(KernelKind::Other, kernels::get_rows<C::token_embd_type, C::n_embd>, w.token_embd, r.tokens, r.n,
             &s.x[r.first][0]);
}

// Calls per_run(run) for every run, then waits for all threads: per_run makes
// Sync::NoWait calls, which in different runs touch different rows and
// caches, so they need no barrier between them.
template <class C, class PerRun>
void each_run(std::span<const Run<C>> runs, PerRun per_run) {
  for (const Run<C>& r : runs) per_run(r);
  kernels::team_barrier();
}

// xn = rmsnorm(x) for tokens [first, first + n), rounded too when a consumer needs it.
template <class C, TensorType... Consumers, class Step>
kernels::MatmulInput normalized_input(Activations<C>& s, const float* weight, int first, int n, Step step) {
  constexpr int E = C::n_embd;
  if constexpr (any_reads_q8<Consumers...>) {
    const kernels::Q8Out rounded = s.q8_out(first, E);
    step.run(KernelKind::Other, kernels::rmsnorm_q8<E>, &s.x[first][0], weight, &s.xn[first][0], n, C::rms_eps,
             rounded);
  } else {
    step.run(KernelKind::Other, kernels::rmsnorm<E>, &s.x[first][0], weight, &s.xn[first][0], n, C::rms_eps);
  }
  return s.input(&s.xn[first][0], first, E);
}

// One transformer block over the batch; each run's tokens attend to their own sequence's cache.
template <class C, class T, class Step>
void layer(Activations<C>& s, const LayerWeights& w, int l, std::span<const Run<C>> runs, Step step) {
  using kernels::Store, kernels::Sync;
  using enum KernelKind;
  constexpr int E = C::n_embd, Q = Activations<C>::q_dim, KV = Activations<C>::kv_dim, FF = C::n_ff;
  const int n = batch_tokens(runs);
  float* x = &s.x[0][0];
  float* k = &s.k_new[0][0];
  float* v = &s.v_new[0][0];

  // Attention. Q, K and V read the same input and write separate outputs, so
  // only the last waits for the others.
  const auto attn_in = normalized_input<C, T::attn_q, T::attn_k, T::attn_v>(s, w.attn_norm, 0, n, step);
  step.run(Matmul, kernels::matmul<T::attn_q, Q, E, Store::Replace, Sync::NoWait>, w.attn_q, attn_in, &s.q[0][0], n);
  step.run(Matmul, kernels::matmul<T::attn_k, KV, E, Store::Replace, Sync::NoWait>, w.attn_k, attn_in, k, n);
  step.run(Matmul, kernels::matmul<T::attn_v, KV, E>, w.attn_v, attn_in, v, n);
  if constexpr (C::qkv_bias) {
    step.run(Other, kernels::add_bias<Q>, &s.q[0][0], w.attn_q_bias, n);
    step.run(Other, kernels::add_bias<KV>, k, w.attn_k_bias, n);
    step.run(Other, kernels::add_bias<KV>, v, w.attn_v_bias, n);
  }
  constexpr auto kRope = C::rope_neox ? kernels::RopeStyle::Neox : kernels::RopeStyle::Adjacent;
  each_run<C>(runs, [&](const Run<C>& r) {
    step.run(Other, kernels::rope<kRope, C::n_head, C::head_dim, C::n_rot, Sync::NoWait>, &s.q[r.first][0], r.n,
             r.pos, s.rope_inv_freq);
    step.run(Other, kernels::rope<kRope, C::n_head_kv, C::head_dim, C::n_rot, Sync::NoWait>, &s.k_new[r.first][0],
             r.n, r.pos, s.rope_inv_freq);
  });
  // Rounded to the cache type only now, after RoPE (as llama.cpp does).
  each_run<C>(runs, [&](const Run<C>& r) {
    step.run(Other, kernels::store_kv<C::kv_type, KV, Sync::NoWait>, &s.k_new[r.first][0], &s.v_new[r.first][0],
             &r.cache->k[l][r.pos][0], &r.cache->v[l][r.pos][0], r.n);
  });
  each_run<C>(runs, [&](const Run<C>& r) {
    step.run(Attention, kernels::attention<C::n_head, C::n_head_kv, C::head_dim, C::kv_type, Sync::NoWait>,
             &s.q[r.first][0], &r.cache->k[l][0][0], &r.cache->v[l][0][0], &s.att[r.first][0], r.n, r.pos,
             &s.scores[0][0][0], C::n_ctx);
  });
  if constexpr (kernels::reads_q8(T::attn_output)) {
    const kernels::Q8Out rounded = s.q8_out(0, Q);
    step.run(Other, kernels::quantize_q8<Q>, &s.att[0][0], n, rounded);
  }
  step.run(Matmul, kernels::matmul<T::attn_output, E, Q, Store::Add>, w.attn_output,
           s.input(&s.att[0][0], 0, Q), x, n);

  // Feed-forward (SwiGLU); gate and up read the same input.
  const auto ffn_in = normalized_input<C, T::ffn_gate, T::ffn_up>(s, w.ffn_norm, 0, n, step);
  step.run(Matmul, kernels::matmul<T::ffn_gate, FF, E, Store::Replace, Sync::NoWait>, w.ffn_gate, ffn_in,
           &s.gate[0][0], n);
  step.run(Matmul, kernels::matmul<T::ffn_up, FF, E>, w.ffn_up, ffn_in, &s.up[0][0], n);
  if constexpr (kernels::reads_q8(T::ffn_down)) {
    const kernels::Q8Out rounded = s.q8_out(0, FF);
    step.run(Other, kernels::swiglu_q8<FF>, &s.gate[0][0], &s.up[0][0], n, rounded);
  } else {
    step.run(Other, kernels::swiglu<FF>, &s.gate[0][0], &s.up[0][0], n);
  }
  step.run(Matmul, kernels::matmul<T::ffn_down, E, FF, Store::Add>, w.ffn_down,
           s.input(&s.gate[0][0], 0, FF), x, n);
}

// The rows of a run whose logits are wanted: [begin, end) of the batch.
template <class C>
std::pair<int, int> wanted_rows(const Run<C>& r) {
  const int end = r.first + r.n;
  switch (r.which) {
    case Logits::All: return {r.first, end};
    case Logits::Last: return {end - 1, end};
    case Logits::None: break;
  }
  return {end, end};
}

// Moves the residual rows whose logits are wanted to rows [0, count), in
// batch order, and returns count. Every thread counts; the first one moves
// the rows (a row never moves down, so in this order none is overwritten
// before it is read; rows already in place stay), then the team meets.
template <class C>
int gather_wanted_rows(Activations<C>& s, std::span<const Run<C>> runs) {
  const bool mover = omp_get_thread_num() == 0;
  int count = 0;
  for (const Run<C>& r : runs)
    for (auto [row, end] = wanted_rows(r); row < end; ++row, ++count)
      if (mover && row != count) std::memcpy(s.x[count], s.x[row], sizeof s.x[0]);
  kernels::team_barrier();
  return count;
}

// Final norm and classifier, only for the tokens whose logits are wanted:
// `logits` receives their rows in batch order.
template <class C, class Step>
void output(Activations<C>& s, const Weights<C>& w, std::span<const Run<C>> runs, float* logits, Step step) {
  const int count = gather_wanted_rows<C>(s, runs);
  if (count == 0) return;
  const auto in = normalized_input<C, C::output_type>(s, w.output_norm, 0, count, step);
  step.run(KernelKind::Matmul, kernels::matmul<C::output_type, C::n_vocab, C::n_embd>, w.output, in, logits, count);
}

}  // namespace kiln::llama
