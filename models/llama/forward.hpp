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

#include <algorithm>
#include <cstdint>

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

// Everything a forward pass writes, at sizes fixed by the configuration:
// the activations of one batch and the KV cache. Allocated once per sequence
// (CompiledSequence), so sequences on one model share nothing they write.
template <class C>
struct State {
  static constexpr int q_dim = C::n_head * C::head_dim;
  static constexpr int kv_dim = C::n_head_kv * C::head_dim;
  // The widest matmul input, in whole Q8 blocks.
  static constexpr int q8_cols = (std::max({C::n_embd, q_dim, C::n_ff}) + 31) / 32 * 32;
  using KvValue = kernels::CacheValue<C::kv_type>;  // the cache's element type, chosen at build time

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
  // This batch's keys and values in float, until RoPE is applied and they are stored in the cache.
  alignas(64) float k_new[C::max_batch][kv_dim];
  alignas(64) float v_new[C::max_batch][kv_dim];
  alignas(64) KvValue k_cache[C::n_layer][C::n_ctx][kv_dim];
  alignas(64) KvValue v_cache[C::n_layer][C::n_ctx][kv_dim];
  alignas(64) float scores[kMaxThreads][C::n_ctx];  // attention scratch, one row per thread
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
void embed(State<C>& s, const Weights<C>& w, const int32_t* tokens, int n, Step step) {
  step.run(KernelKind::Other, kernels::get_rows<C::token_embd_type, C::n_embd>, w.token_embd, tokens, n, &s.x[0][0]);
}

// xn = rmsnorm(x) for tokens [first, first + n), rounded too when a consumer needs it.
template <class C, TensorType... Consumers, class Step>
kernels::MatmulInput normalized_input(State<C>& s, const float* weight, int first, int n, Step step) {
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

// One transformer block over the batch at positions [pos, pos + n).
template <class C, class T, class Step>
void layer(State<C>& s, const LayerWeights& w, int l, int n, int pos, Step step) {
  using kernels::Store, kernels::Sync;
  using enum KernelKind;
  constexpr int E = C::n_embd, Q = State<C>::q_dim, KV = State<C>::kv_dim, FF = C::n_ff;
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
  step.run(Other, kernels::rope<kRope, C::n_head, C::head_dim, C::n_rot, Sync::NoWait>, &s.q[0][0], n, pos,
           s.rope_inv_freq);
  step.run(Other, kernels::rope<kRope, C::n_head_kv, C::head_dim, C::n_rot>, k, n, pos, s.rope_inv_freq);
  // Rounded to the cache type only now, after RoPE (as llama.cpp does).
  step.run(Other, kernels::store_kv<C::kv_type, KV>, k, v, &s.k_cache[l][pos][0], &s.v_cache[l][pos][0], n);
  step.run(Attention, kernels::attention<C::n_head, C::n_head_kv, C::head_dim, C::kv_type>, &s.q[0][0],
           &s.k_cache[l][0][0], &s.v_cache[l][0][0], &s.att[0][0], n, pos, &s.scores[0][0], C::n_ctx);
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

// Final norm and classifier, only for the positions whose logits are wanted.
template <class C, class Step>
void output(State<C>& s, const Weights<C>& w, int n, Logits which, float* logits, Step step) {
  if (which == Logits::None) return;
  const int first = which == Logits::Last ? n - 1 : 0;
  const int count = n - first;
  const auto in = normalized_input<C, C::output_type>(s, w.output_norm, first, count, step);
  step.run(KernelKind::Matmul, kernels::matmul<C::output_type, C::n_vocab, C::n_embd>, w.output, in, logits, count);
}

}  // namespace kiln::llama
