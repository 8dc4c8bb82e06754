// The activations of a mixture-of-experts feed-forward (models/decoder/moe.hpp)
// for one batch, at sizes fixed by the configuration: a member of every
// model's Activations, empty in a dense one.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/matmul.hpp"
#include "kernels/q8_activations.hpp"

namespace kiln::decoder {

// A shared expert's (Qwen2-MoE), beside the routed ones: one row per token.
template <class C, bool = (C::n_ff_shexp > 0)>
struct SharedExpertActivations {};

template <class C>
struct SharedExpertActivations<C, true> {
  alignas(64) float gate_logit[C::max_batch][1];  // its gate's, before the sigmoid
  alignas(64) float gate[C::max_batch][C::n_ff_shexp];
  alignas(64) float up[C::max_batch][C::n_ff_shexp];
  alignas(64) float out[C::max_batch][C::n_embd];
};

template <class C, bool = (C::n_expert > 0)>
struct MoeActivations {};

template <class C>
struct MoeActivations<C, true> {
  static constexpr int K = C::n_expert_used;
  // One row per token and expert it is routed to, grouped by expert.
  static constexpr int kRows = C::max_batch * K;
  // The widest expert input (the gathered rows, or the down projection's), in whole Q8 blocks.
  static constexpr int kQ8Cols = (std::max(C::n_embd, C::n_ff_exp) + 31) / 32 * 32;

  alignas(64) float router[C::max_batch][C::n_expert];  // the router's logits, then each token's probabilities
  alignas(64) int32_t expert[C::max_batch][K];  // each token's experts, most probable first
  alignas(64) float weight[C::max_batch][K];    // and their weights
  int32_t row_of[C::max_batch][K];              // the row each (token, expert) pair has
  int32_t first[C::n_expert + 1];               // expert e's rows: [first[e], first[e + 1])
  int32_t token_of[kRows];                      // the token of each row
  alignas(64) float rows[kRows][C::n_embd];     // each row's input (the token's), then the expert's output
  alignas(64) float gate[kRows][C::n_ff_exp];
  alignas(64) float up[kRows][C::n_ff_exp];
  // The experts' current input rounded to Q8 blocks ([kRows][cols] packed for its width).
  alignas(64) int8_t q8[kRows * kQ8Cols];
  alignas(64) float q8_scale[kRows * kQ8Cols / 32];
  alignas(64) int32_t q8_sum[kRows * kQ8Cols / kernels::kQ8HalfElems];
  alignas(64) float q8_scaled_sum[kRows * kQ8Cols / 32 * kernels::kQ8ScaledSums];
  [[no_unique_address]] SharedExpertActivations<C> shared;

  kernels::Q8Out q8_out() { return {q8, q8_scale, q8_sum, q8_scaled_sum}; }
  // The input at f ([kRows][cols]), in both forms.
  kernels::MatmulInput input(const float* f) { return {f, {q8, q8_scale, q8_sum, q8_scaled_sum}}; }
};

}  // namespace kiln::decoder
