// The llama forward pass, written once as templates over a compile-time
// configuration. Codegen instantiates it for one model: `Config` carries the
// hyperparameters and sizes, each layer's `Types` the weight type of each of
// its tensors, so every kernel call below is resolved at compile time.
//
// All functions here run inside the single OpenMP parallel region that the
// generated forward opens; every kernel shares out its own work and ends
// with a barrier, so the calls simply follow each other.
#pragma once

#include <cstdint>

#include "engine/model.hpp"
#include "kernels/activation.hpp"
#include "kernels/attention.hpp"
#include "kernels/matmul.hpp"
#include "kernels/norm.hpp"
#include "kernels/rope.hpp"

namespace kiln::llama {

// Upper bound on OpenMP threads (sizes the per-thread attention scratch).
inline constexpr int kMaxThreads = 64;

// Pointers into the mmapped GGUF, bound once at load time.
struct LayerWeights {
  const float* attn_norm;
  const void* attn_q;
  const void* attn_k;
  const void* attn_v;
  const void* attn_output;
  const float* ffn_norm;
  const void* ffn_gate;
  const void* ffn_up;
  const void* ffn_down;
};

template <class C>
struct Weights {
  const void* token_embd;
  const float* output_norm;
  const void* output;  // token_embd when the output matrix is tied
  LayerWeights layers[C::n_layer];
};

// Everything a forward pass writes, at sizes fixed by the configuration:
// the activations of one batch and the KV cache. Allocated once per model.
template <class C>
struct State {
  static constexpr int q_dim = C::n_head * C::head_dim;
  static constexpr int kv_dim = C::n_head_kv * C::head_dim;

  alignas(64) float x[C::max_batch][C::n_embd];   // residual stream
  alignas(64) float xn[C::max_batch][C::n_embd];  // normalized block input, then block output
  alignas(64) float q[C::max_batch][q_dim];
  alignas(64) float att[C::max_batch][q_dim];     // attention output before the projection
  alignas(64) float gate[C::max_batch][C::n_ff];
  alignas(64) float up[C::max_batch][C::n_ff];
  alignas(64) float k_cache[C::n_layer][C::n_ctx][kv_dim];
  alignas(64) float v_cache[C::n_layer][C::n_ctx][kv_dim];
  alignas(64) float scores[kMaxThreads][C::n_ctx];  // attention scratch, one row per thread
  float rope_inv_freq[C::n_rot / 2];
};

template <class C>
void embed(State<C>& s, const Weights<C>& w, const int32_t* tokens, int n) {
  kernels::get_rows<C::token_embd_type, C::n_embd>(w.token_embd, tokens, n, &s.x[0][0]);
}

// One transformer block over the batch at positions [pos, pos + n).
template <class C, class T>
void layer(State<C>& s, const LayerWeights& w, int l, int n, int pos) {
  constexpr int E = C::n_embd, Q = State<C>::q_dim, KV = State<C>::kv_dim, FF = C::n_ff;
  float* x = &s.x[0][0];
  float* xn = &s.xn[0][0];
  float* k = &s.k_cache[l][pos][0];  // this batch's keys and values go straight into the cache
  float* v = &s.v_cache[l][pos][0];

  // Attention.
  kernels::rmsnorm<E>(x, w.attn_norm, xn, n, C::rms_eps);
  kernels::matmul<T::attn_q, Q, E>(w.attn_q, xn, &s.q[0][0], n);
  kernels::matmul<T::attn_k, KV, E>(w.attn_k, xn, k, n);
  kernels::matmul<T::attn_v, KV, E>(w.attn_v, xn, v, n);
  kernels::rope_adjacent<C::n_head, C::head_dim, C::n_rot>(&s.q[0][0], n, pos, s.rope_inv_freq);
  kernels::rope_adjacent<C::n_head_kv, C::head_dim, C::n_rot>(k, n, pos, s.rope_inv_freq);
  kernels::attention<C::n_head, C::n_head_kv, C::head_dim>(&s.q[0][0], &s.k_cache[l][0][0], &s.v_cache[l][0][0],
                                                           &s.att[0][0], n, pos, &s.scores[0][0], C::n_ctx);
  kernels::matmul<T::attn_output, E, Q>(w.attn_output, &s.att[0][0], xn, n);
  kernels::add<E>(x, xn, n);

  // Feed-forward (SwiGLU).
  kernels::rmsnorm<E>(x, w.ffn_norm, xn, n, C::rms_eps);
  kernels::matmul<T::ffn_gate, FF, E>(w.ffn_gate, xn, &s.gate[0][0], n);
  kernels::matmul<T::ffn_up, FF, E>(w.ffn_up, xn, &s.up[0][0], n);
  kernels::swiglu<FF>(&s.gate[0][0], &s.up[0][0], n);
  kernels::matmul<T::ffn_down, E, FF>(w.ffn_down, &s.gate[0][0], xn, n);
  kernels::add<E>(x, xn, n);
}

// Final norm and classifier, only for the positions whose logits are wanted.
template <class C>
void output(State<C>& s, const Weights<C>& w, int n, Logits which, float* logits) {
  if (which == Logits::None) return;
  const int first = which == Logits::Last ? n - 1 : 0;
  const int count = n - first;
  kernels::rmsnorm<C::n_embd>(&s.x[first][0], w.output_norm, &s.xn[first][0], count, C::rms_eps);
  kernels::matmul<C::output_type, C::n_vocab, C::n_embd>(w.output, &s.xn[first][0], logits, count);
}

}  // namespace kiln::llama
