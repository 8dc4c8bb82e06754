// The mixture-of-experts feed-forward a layer can have in place of the dense
// one: llama.cpp's build_moe_ffn with SwiGLU experts, as Qwen3-MoE and
// gpt-oss use it (MoeStyle). The number of experts, the experts each token uses and an
// expert's width are the configuration's constants, so every array is sized
// at compile time and nothing is allocated or dispatched per token.
//
// A batch is routed first (each token's K experts and their weights), then
// its (token, expert) pairs are grouped by expert and each pair's input row
// gathered there, so every expert a token of the batch uses multiplies its
// matrices once with all the rows routed to it, and an expert nobody uses is
// not read: generating a token reads the K selected experts' matrices only.
// The experts' outputs are then summed, weighted, into the residual stream.
//
// A layer whose architecture lists a shared expert's tensors (Qwen2-MoE:
// ffn_{gate,up,down}_shexp and the one-row gate ffn_gate_inp_shexp; a
// configuration with n_ff_shexp > 0) also runs that SwiGLU feed-forward on
// every token of the batch, as ordinary matmuls, and adds it, scaled by the
// sigmoid of its gate, to the experts' sum.
#pragma once

#include "kernels/moe.hpp"
#include "models/decoder/blocks.hpp"

namespace kiln::decoder {

// out = W in for every expert's rows (p.s.moe.first), W the pass's M experts.
template <Matrix M, Sync Y = Sync::Barrier, class P, size_t B, size_t N>
void expert_matmul(const P& p, const void* w, kernels::MatmulInput in, float (&out)[B][N]) {
  using C = typename P::C;
  static_assert(N == matrix_rows<C, M>());
  constexpr TensorType T = weight_type<typename P::L::Types, M>();
  p.step.run(KernelKind::Matmul,
             kernels::expert_matmul<T, C::n_expert, matrix_rows<C, M>(), matrix_cols<C, M>(), Y>, w, in,
             &p.s.moe.first[0], &out[0][0]);
}

// What the mixtures llama.cpp's build_moe_ffn computes for kiln's
// architectures differ in: how the router's logits become the experts'
// weights, whether the router and the experts add biases (gpt-oss), and
// the experts' gate (gpt-oss's clamped SwiGLU).
struct MoeStyle {
  kernels::Gating gating = kernels::Gating::Softmax;
  bool biases = false;
  kernels::Glu glu = kernels::Glu::Silu;
};

// out's rows (grouped by expert) += their expert's bias.
template <class P, size_t B, size_t N>
void expert_bias(const P& p, float (&out)[B][N], const float* bias) {
  p.step.run(KernelKind::Other, kernels::add_expert_bias<P::C::n_expert, int(N)>, &out[0][0], bias,
             &p.s.moe.first[0]);
}

// The shared expert of the mixture's input `in`, for every token: its gate's
// logit and its SwiGLU output (p.s.moe.shared). Its down projection's input
// is rounded over `in`'s Q8 form, which nothing reads afterwards.
template <class P>
void shared_expert(const P& p, const LayerWeights& w, kernels::MatmulInput in) {
  using enum Matrix;
  constexpr int FF = P::C::n_ff_shexp;
  auto& sh = p.s.moe.shared;
  matmul<ffn_gate_inp_shexp, Store::Replace, Sync::NoWait>(p, w.ffn_gate_inp_shexp, in, sh.gate_logit);
  matmul<ffn_gate_shexp, Store::Replace, Sync::NoWait>(p, w.ffn_gate_shexp, in, sh.gate);
  matmul<ffn_up_shexp>(p, w.ffn_up_shexp, in, sh.up);
  swiglu_rows<ffn_down_shexp>(p, sh.gate, sh.up, p.n, p.s.q8_out(0, FF));
  matmul<ffn_down_shexp>(p, w.ffn_down_shexp, p.s.input(&sh.gate[0][0], 0, FF), sh.out);
}

// rmsnorm(x) * norm_weight: the mixture's input, rounded to Q8 where the
// router, the experts' gate and up or the shared expert's matrices read that.
template <class P>
kernels::MatmulInput moe_input(const P& p, const float* norm_weight) {
  using enum Matrix;
  if constexpr (P::C::n_ff_shexp > 0)
    return norm<ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp>(
        p, norm_weight);
  else
    return norm<ffn_gate_inp, ffn_gate_exps, ffn_up_exps>(p, norm_weight);
}

// x += the experts' feed-forward of rmsnorm(x) * norm_weight (ffn_norm;
// gpt-oss's post_attention_norm), and the shared expert's where the layer has one.
template <MoeStyle S = MoeStyle{}, class P>
void moe_ffn(const P& p, const LayerWeights& w, const float* norm_weight) {
  using enum Matrix;
  using C = typename P::C;
  constexpr int E = C::n_embd, NE = C::n_expert, K = C::n_expert_used;
  constexpr bool kShared = C::n_ff_shexp > 0;
  auto& s = p.s;
  auto& m = s.moe;
  const int rows = p.n * K;

  const auto in = moe_input(p, norm_weight);
  matmul<ffn_gate_inp>(p, w.ffn_gate_inp, in, m.router);
  if constexpr (S.biases) add_bias(p, m.router, w.ffn_gate_inp_bias);
  p.step.run(KernelKind::Other, kernels::route_top_k<NE, K, C::expert_weights_norm, S.gating>, &m.router[0][0], p.n,
             &m.expert[0][0], &m.weight[0][0]);
  p.step.run(KernelKind::Other, kernels::group_by_expert<NE, K>, &m.expert[0][0], p.n, &m.first[0], &m.row_of[0][0],
             &m.token_of[0]);

  // Each row's input, in the forms the gate and up experts read.
  constexpr bool kQ8 = reads_q8<P, ffn_gate_exps> || reads_q8<P, ffn_up_exps>;
  constexpr bool kFloat = !reads_q8<P, ffn_gate_exps> || !reads_q8<P, ffn_up_exps>;
  const kernels::Q8Out gathered = m.q8_out();
  p.step.run(KernelKind::Other, kernels::gather_rows<E, kFloat, kQ8>, in, &m.token_of[0], rows, &m.rows[0][0], gathered);
  if constexpr (kShared) shared_expert(p, w, in);
  const auto x = m.input(&m.rows[0][0]);
  expert_matmul<ffn_gate_exps, Sync::NoWait>(p, w.ffn_gate_exps, x, m.gate);
  expert_matmul<ffn_up_exps>(p, w.ffn_up_exps, x, m.up);
  if constexpr (S.biases) {
    expert_bias(p, m.gate, w.ffn_gate_exps_bias);
    expert_bias(p, m.up, w.ffn_up_exps_bias);
  }

  const kernels::Q8Out rounded = m.q8_out();
  swiglu_rows<ffn_down_exps, S.glu>(p, m.gate, m.up, rows, rounded);
  expert_matmul<ffn_down_exps>(p, w.ffn_down_exps, m.input(&m.gate[0][0]), m.rows);
  if constexpr (S.biases) expert_bias(p, m.rows, w.ffn_down_exps_bias);
  const float *shared = nullptr, *shared_logit = nullptr;
  if constexpr (kShared) {
    shared = &m.shared.out[0][0];
    shared_logit = &m.shared.gate_logit[0][0];
  }
  p.step.run(KernelKind::Other, kernels::add_experts<E, K, kShared>, &m.rows[0][0], &m.row_of[0][0], &m.weight[0][0],
             &s.x[0][0], p.n, shared, shared_logit);
}

}  // namespace kiln::decoder
