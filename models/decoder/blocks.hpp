// The building blocks an architecture's layer is written with
// (models/<arch>/<arch>.hpp): each takes the Pass (forward.hpp) and makes its
// kernel calls through the pass's Step. A matrix is named by its role; its
// weight type comes from the layer's compile-time Types, its shape from the
// configuration, so a call reads
//
//   matmul<attn_q>(p, w.attn_q, in, p.s.q);
//
// and compiles to one kernel call for exactly that type and shape.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/activation.hpp"
#include "kernels/gelu.hpp"
#include "kernels/norm.hpp"
#include "kernels/rope.hpp"
#include "models/decoder/forward.hpp"

namespace kiln::decoder {

using kernels::Store;
using kernels::Sync;

// The matrices of a block, by role (their fields in LayerWeights and Types):
// ffn_gate_inp is a mixture's router, each *_exps role one expert's
// matrix (its shape below), each *_shexp role its shared expert's
// (ffn_gate_inp_shexp: the one-row gate; models/decoder/moe.hpp).
enum class Matrix {
  attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down,
  ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps,
  ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp
};

template <class Types, Matrix M>
constexpr TensorType weight_type() {
  if constexpr (M == Matrix::attn_q) return Types::attn_q;
  if constexpr (M == Matrix::attn_k) return Types::attn_k;
  if constexpr (M == Matrix::attn_v) return Types::attn_v;
  if constexpr (M == Matrix::attn_output) return Types::attn_output;
  if constexpr (M == Matrix::ffn_gate) return Types::ffn_gate;
  if constexpr (M == Matrix::ffn_up) return Types::ffn_up;
  if constexpr (M == Matrix::ffn_down) return Types::ffn_down;
  if constexpr (M == Matrix::ffn_gate_inp) return Types::ffn_gate_inp;
  if constexpr (M == Matrix::ffn_gate_exps) return Types::ffn_gate_exps;
  if constexpr (M == Matrix::ffn_up_exps) return Types::ffn_up_exps;
  if constexpr (M == Matrix::ffn_down_exps) return Types::ffn_down_exps;
  if constexpr (M == Matrix::ffn_gate_inp_shexp) return Types::ffn_gate_inp_shexp;
  if constexpr (M == Matrix::ffn_gate_shexp) return Types::ffn_gate_shexp;
  if constexpr (M == Matrix::ffn_up_shexp) return Types::ffn_up_shexp;
  if constexpr (M == Matrix::ffn_down_shexp) return Types::ffn_down_shexp;
}

// A matrix's input and output sizes.
template <class C, Matrix M>
constexpr int matrix_cols() {
  if constexpr (M == Matrix::attn_output) return Activations<C>::q_dim;
  if constexpr (M == Matrix::ffn_down) return C::n_ff;
  if constexpr (M == Matrix::ffn_down_exps) return C::n_ff_exp;
  if constexpr (M == Matrix::ffn_down_shexp) return C::n_ff_shexp;
  return C::n_embd;
}
template <class C, Matrix M>
constexpr int matrix_rows() {
  if constexpr (M == Matrix::attn_q) return Activations<C>::q_dim;
  if constexpr (M == Matrix::attn_k || M == Matrix::attn_v) return Activations<C>::kv_dim;
  if constexpr (M == Matrix::ffn_gate || M == Matrix::ffn_up) return C::n_ff;
  if constexpr (M == Matrix::ffn_gate_inp) return C::n_expert;
  if constexpr (M == Matrix::ffn_gate_exps || M == Matrix::ffn_up_exps) return C::n_ff_exp;
  if constexpr (M == Matrix::ffn_gate_inp_shexp) return 1;
  if constexpr (M == Matrix::ffn_gate_shexp || M == Matrix::ffn_up_shexp) return C::n_ff_shexp;
  return C::n_embd;
}

// Whether the matrix M of the pass's layer reads its input rounded to Q8 blocks.
template <class P, Matrix M>
inline constexpr bool reads_q8 = kernels::reads_q8(weight_type<typename P::L::Types, M>());

// s.xn = rmsnorm(s.x) * weight for the first n tokens, rounded to Q8 blocks
// too when `Rounded`; returns the input a matmul reads. The layers' norms and
// the final one.
template <bool Rounded, class C, class Step>
kernels::MatmulInput normalized(Activations<C>& s, const float* weight, int n, Step step) {
  constexpr int E = C::n_embd;
  if constexpr (Rounded) {
    const kernels::Q8Out rounded = s.q8_out(0, E);
    step.run(KernelKind::Other, kernels::rmsnorm_q8<E>, &s.x[0][0], weight, &s.xn[0][0], n, C::rms_eps, rounded);
  } else {
    step.run(KernelKind::Other, kernels::rmsnorm<E>, &s.x[0][0], weight, &s.xn[0][0], n, C::rms_eps);
  }
  return s.input(&s.xn[0][0], 0, E);
}

// p.s.xn = rmsnorm(p.s.x) * weight, rounded too when one of Consumers needs
// it; returns the input they read.
template <Matrix... Consumers, class P>
kernels::MatmulInput norm(const P& p, const float* weight) {
  return normalized<(reads_q8<P, Consumers> || ...)>(p.s, weight, p.n, p.step);
}

// `from` as the input of M: rounded to Q8 blocks first if M reads it so.
template <Matrix M, class P, size_t B, size_t N>
kernels::MatmulInput input(const P& p, const float (&from)[B][N]) {
  static_assert(N == matrix_cols<typename P::C, M>());
  if constexpr (reads_q8<P, M>) {
    const kernels::Q8Out rounded = p.s.q8_out(0, N);
    p.step.run(KernelKind::Other, kernels::quantize_q8<int(N)>, &from[0][0], p.n, rounded);
  }
  return p.s.input(&from[0][0], 0, N);
}

// out = W in (Store::Replace) or out += W in (Store::Add), for the batch's tokens.
template <Matrix M, Store S = Store::Replace, Sync Y = Sync::Barrier, class P, size_t B, size_t N>
void matmul(const P& p, const void* w, kernels::MatmulInput in, float (&out)[B][N]) {
  using C = typename P::C;
  static_assert(N == matrix_rows<C, M>());
  constexpr TensorType T = weight_type<typename P::L::Types, M>();
  p.step.run(KernelKind::Matmul, kernels::matmul<T, matrix_rows<C, M>(), matrix_cols<C, M>(), S, Y>, w, in,
             &out[0][0], p.n);
}

template <class P, size_t B, size_t N>
void add_bias(const P& p, float (&x)[B][N], const float* bias) {
  p.step.run(KernelKind::Other, kernels::add_bias<int(N)>, &x[0][0], bias, p.n);
}

// Each head of x (heads of C::head_dim values) normalized with the one
// weight all heads share: Q and K norms.
template <class P, size_t B, size_t N>
void head_norm(const P& p, float (&x)[B][N], const float* weight) {
  using C = typename P::C;
  constexpr int kHeads = int(N) / C::head_dim;
  p.step.run(KernelKind::Other, kernels::rmsnorm<C::head_dim>, &x[0][0], weight, &x[0][0], p.n * kHeads, C::rms_eps);
}

// The layer's attention, from p.s.q, p.s.k_new and p.s.v_new: RoPE on the
// queries and keys (none in a NoPE layer; its cosines and sines scaled by
// rope.scaling.attn_factor, as llama.cpp's graphs pass it to each rotation),
// keys and values rounded to the cache type and stored in each run's cache,
// then p.s.att = attention over the cache (its last n_swa positions in a
// sliding-window layer; with `sinks`, a logit per head joining each softmax).
template <class P>
void self_attention(const P& p, const float* sinks = nullptr) {
  using C = typename P::C;
  using L = typename P::L;
  constexpr int KV = Activations<C>::kv_dim;
  auto& s = p.s;
  if constexpr (L::kind.rope) {
    constexpr auto kStyle = C::Arch::rope_style;
    const float* inv_freq = L::kind.sliding ? s.rope_inv_freq_swa : s.rope_inv_freq;
    each_run<C>(p.runs, [&](const Run<C>& r) {
      p.step.run(KernelKind::Other,
                 kernels::rope<kStyle, C::n_head, C::n_head_kv, C::head_dim, C::n_rot, Sync::NoWait>,
                 &s.q[r.first][0], &s.k_new[r.first][0], r.n, r.pos, inv_freq, C::rope_attn_factor);
    });
  }
  // Rounded to the cache type only now, after RoPE (as llama.cpp does).
  constexpr int l = L::index;
  constexpr int kRing = kv_ring<C>(L::kind);
  each_run<C>(p.runs, [&](const Run<C>& r) {
    // A ring's rows from the run's first position to its end, then from its start.
    const int row = kRing > 0 ? r.pos % kRing : r.pos;
    const int before_wrap = kRing > 0 ? std::min(r.n, kRing - row) : r.n;
    const auto store = [&](int token, int at, int n) {
      p.step.run(KernelKind::Other, kernels::store_kv<C::kv_type, KV, kernels::kv_values_blocked<C::head_dim>, Sync::NoWait>,
                 &s.k_new[r.first + token][0], &s.v_new[r.first + token][0], r.cache->k[l], r.cache->v[l], at, n);
    };
    store(0, row, before_wrap);
    if (before_wrap < r.n) store(before_wrap, 0, r.n - before_wrap);
  });
  constexpr int kWindow = L::kind.sliding ? C::n_swa : 0;
  each_run<C>(p.runs, [&](const Run<C>& r) {
    p.step.run(KernelKind::Attention,
               kernels::attention<C::n_head, C::n_head_kv, C::head_dim, C::kv_type, Sync::NoWait, kRing>,
               &s.q[r.first][0], r.cache->k[l], r.cache->v[l], &s.att[r.first][0], r.n, r.pos, s.scores.data(),
               C::n_ctx, C::attn_scale, kWindow, sinks);
  });
}

// The attention's Q, K and V of the normalized residual (p.s.q, p.s.k_new,
// p.s.v_new). They read the same input and write separate outputs, so only
// the last waits for the others.
template <class P>
void qkv(const P& p, const LayerWeights& w) {
  using enum Matrix;
  const auto in = norm<attn_q, attn_k, attn_v>(p, w.attn_norm);
  matmul<attn_q, Store::Replace, Sync::NoWait>(p, w.attn_q, in, p.s.q);
  matmul<attn_k, Store::Replace, Sync::NoWait>(p, w.attn_k, in, p.s.k_new);
  matmul<attn_v>(p, w.attn_v, in, p.s.v_new);
}

// The attention's output projection of p.s.att, into `out` (Store::Add: the residual stream).
template <Store S, class P, size_t B, size_t N>
void attention_output(const P& p, const LayerWeights& w, float (&out)[B][N]) {
  matmul<Matrix::attn_output, S>(p, w.attn_output, input<Matrix::attn_output>(p, p.s.att), out);
}

// The feed-forward's gate and up of the normalized residual (p.s.gate,
// p.s.up), which read the same input.
template <class P>
void gate_up(const P& p, const LayerWeights& w) {
  using enum Matrix;
  const auto in = norm<ffn_gate, ffn_up>(p, w.ffn_norm);
  matmul<ffn_gate, Store::Replace, Sync::NoWait>(p, w.ffn_gate, in, p.s.gate);
  matmul<ffn_up>(p, w.ffn_up, in, p.s.up);
}

// gate = silu(gate) * up (or gpt-oss's clamped gate, G) for the first n
// rows, rounded into `rounded` in the same pass when Down, the matrix that
// reads the result, reads Q8.
template <Matrix Down, kernels::Glu G = kernels::Glu::Silu, class P, size_t B, size_t FF>
void swiglu_rows(const P& p, float (&gate)[B][FF], const float (&up)[B][FF], int n, kernels::Q8Out rounded) {
  if constexpr (reads_q8<P, Down>)
    p.step.run(KernelKind::Other, kernels::swiglu_q8<int(FF), G>, &gate[0][0], &up[0][0], n, rounded);
  else
    p.step.run(KernelKind::Other, kernels::swiglu<int(FF), G>, &gate[0][0], &up[0][0], n);
}

// p.s.gate = silu(gate) * up; returns ffn_down's input.
template <class P>
kernels::MatmulInput swiglu(const P& p) {
  constexpr int FF = P::C::n_ff;
  const kernels::Q8Out rounded = p.s.q8_out(0, FF);
  swiglu_rows<Matrix::ffn_down>(p, p.s.gate, p.s.up, p.n, rounded);
  return p.s.input(&p.s.gate[0][0], 0, FF);
}

// p.s.gate = gelu(gate) * up (GELU's tanh form, as ggml rounds it:
// kernels/gelu.hpp); returns ffn_down's input.
template <class P>
kernels::MatmulInput geglu(const P& p) {
  p.step.run(KernelKind::Other, kernels::geglu<P::C::n_ff>, &p.s.gate[0][0], &p.s.up[0][0], p.n);
  return input<Matrix::ffn_down>(p, p.s.gate);
}

// x += y + bias over the batch: a block's output and its bias, into the
// residual stream.
template <class P, size_t B, size_t N>
void add_biased(const P& p, const float (&y)[B][N], const float* bias) {
  p.step.run(KernelKind::Other, kernels::add_biased<int(N)>, &y[0][0], bias, &p.s.x[0][0], p.n);
}

// x += rmsnorm(y) * weight over the batch: a block's output through its
// post-norm, into the residual stream.
template <class P, size_t B, size_t N>
void add_normalized(const P& p, const float (&y)[B][N], const float* weight) {
  p.step.run(KernelKind::Other, kernels::rmsnorm_add<int(N)>, &y[0][0], weight, &p.s.x[0][0], p.n, P::C::rms_eps);
}

}  // namespace kiln::decoder
