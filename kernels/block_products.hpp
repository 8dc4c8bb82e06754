// The integer products of one decoded weight block (or half of it) with the
// blocks of several tokens, and the integers those products start from.
//
// A block product of unsigned codes with a bias is sum(code * x) minus
// bias * sum(x) (int8_dot.hpp). The second term depends only on the token's
// activations and the type, so it is computed once per chunk of tokens,
// matmul and thread (chain_starts) and each product starts from it: read
// from memory, it takes no place on the vector ports the products need.
#pragma once

#include <cstdint>

#include "kernels/arch/code_span.hpp"
#include "kernels/int8_dot.hpp"
#include "kernels/q8_activations.hpp"

namespace kiln::kernels {

// Types whose half blocks have scales of their own take a start per half.
constexpr int starts_per_block(TensorType t) { return t == TensorType::Q6_K || t == TensorType::Q3_K ? 2 : 1; }

// out[b * starts_per_block(T) + h] = -code_bias(T) * (block b's sum, or its
// half h's) for the n_blocks blocks of x.
template <TensorType T>
void chain_starts(Q8In x, int64_t n_blocks, int32_t* out) {
  constexpr int32_t kBias = code_bias(T);
  if constexpr (starts_per_block(T) == 2) {
    for (int64_t i = 0; i < 2 * n_blocks; ++i) out[i] = -kBias * x.sum[i];
  } else {
    for (int64_t b = 0; b < n_blocks; ++b) out[b] = -kBias * x.at_block(b).block_sum();
  }
}

// The starts from block `first` on (none without starts).
template <TensorType T>
const int32_t* starts_from(const int32_t* starts, int64_t first) {
  return starts ? starts + first * starts_per_block(T) : nullptr;
}

// Where a tile's tokens are: token t's block at qs + t * token_bytes, its
// start at start[t * start_stride] (no starts: they are zero).
struct TokenBlocks {
  const int8_t* qs;
  int64_t token_bytes;
  const int32_t* start;
  int64_t start_stride;

  int32_t start_of(int t) const { return start ? start[t * start_stride] : 0; }
};

// Whether Ops multiplies a tile of NVecs tokens together (dot_tokens), their
// chains interleaved. Such an instruction set multiplies every type as
// unsigned codes (its dot<T> is dot_codes over the whole block).
template <class Ops, int NVecs>
concept MultipliesTokensTogether =
    requires(const typename Ops::Quants& w, const int8_t* qs, int64_t n, const int32_t* s,
             typename Ops::Rows (&out)[NVecs]) {
      Ops::template dot_tokens<arch::CodeSpan::Both, NVecs>(w, qs, n, s, n, out);
    };

// out[t] = token t's product with span S of the decoded codes w (at most
// MaxCode), from its start.
template <class Ops, arch::CodeSpan S, int MaxCode, int NVecs>
void span_products(const typename Ops::Quants& w, const TokenBlocks& x, typename Ops::Rows (&out)[NVecs]) {
  if constexpr (MultipliesTokensTogether<Ops, NVecs>) {
    Ops::template dot_tokens<S, NVecs>(w, x.qs, x.token_bytes, x.start, x.start_stride, out);
  } else {
    for (int t = 0; t < NVecs; ++t)
      out[t] = Ops::template dot_codes<S, MaxCode>(w, x.qs + t * x.token_bytes, -x.start_of(t));
  }
}

// The same over a whole block of a 32-element block type T, which the
// instruction sets without dot_tokens may multiply in a way of their own
// (signed weights: dot<T>).
template <class Ops, TensorType T, int NVecs>
void block_products(const typename Ops::Quants& w, const TokenBlocks& x, typename Ops::Rows (&out)[NVecs]) {
  if constexpr (MultipliesTokensTogether<Ops, NVecs>) {
    span_products<Ops, arch::CodeSpan::Both, 255, NVecs>(w, x, out);
  } else {
    for (int t = 0; t < NVecs; ++t) out[t] = Ops::template dot<T>(w, x.qs + t * x.token_bytes, -x.start_of(t));
  }
}

}  // namespace kiln::kernels
