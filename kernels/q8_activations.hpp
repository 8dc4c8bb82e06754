// Activations rounded to 8 bits, the input of the integer matmul for every
// quantized weight type, and the kernels that produce them (alone, or fused with the
// step that computes the activations, which saves a pass and a barrier).
//
// The rounding is ggml's for x86 (quantize_row_q8_0): per block of 32 values,
// d = amax / 127 stored as fp16, q = round-to-nearest-even(x * 127 / amax).
// Rounding exactly like llama.cpp keeps kiln's logits within float noise of
// its reference outputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/activation.hpp"
#include "kernels/fp16.hpp"
#include "kernels/norm.hpp"
#include "kernels/quant.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

// Each block's qs are also summed, per half of 16 values: weights stored as
// unsigned codes with an offset (Q4_0's nibble - 8, Q6_K's code - 32, ...)
// or with a min (Q5_1, Q2_K, Q4_K, Q5_K) need sum(x) over the span one
// weight scale covers, which is 16 values for Q2_K, Q3_K and Q6_K (see
// int8_dot.hpp and dot_kquant.hpp).
inline constexpr int kQ8HalfElems = kQuantBlockElems / 2;

// Each block's scale times those sums, as floats: d * S0, d * S1 and
// d * (S0 + S1), the products the weights with a min (Q2_K by halves, Q4_K,
// Q5_K and Q5_1 by blocks) take from every token and block. Computed once
// here rather than in the matmul's token loop, where the scalar work and
// its broadcast took vector ports from the integer products; the same
// float products either way, so the same bits.
inline constexpr int kQ8ScaledSums = 3;

// Where rounded activations go: token t's Cols values as Cols / 32 blocks,
// x[t][k] ~ d[t][k / 32] * qs[t][k] (d as float; its value is an fp16's),
// the sums of qs[t][16h .. 16h + 15], half h, in sum[t][k / 16], and the
// block's scaled sums in scaled_sum[t][3 * (k / 32) ..].
struct Q8Out {
  int8_t* qs;
  float* d;
  int32_t* sum;
  float* scaled_sum;

  Q8Out at_block(int64_t block) const {
    return {qs + block * kQuantBlockElems, d + block, sum + 2 * block, scaled_sum + kQ8ScaledSums * block};
  }
};

// The same, read-only, for the matmul.
struct Q8In {
  const int8_t* qs;
  const float* d;
  const int32_t* sum;
  const float* scaled_sum;

  Q8In at_block(int64_t block) const {
    return {qs + block * kQuantBlockElems, d + block, sum + 2 * block, scaled_sum + kQ8ScaledSums * block};
  }
  // The sum of the block's 32 qs.
  int32_t block_sum() const { return sum[0] + sum[1]; }
  // d times half h's sum (h = 0, 1), or times the block's (h = 2).
  float scaled(int h) const { return scaled_sum[h]; }
};

// Blocks rounded together by quantize_blocks_q8: one per float lane, so
// that their largest magnitudes and their half sums each come out of one
// tree across vectors (max_each, sum_each) rather than one per block.
inline constexpr int kQ8BlocksAtOnce = kFloatLanes;

// Rounds the n (1 .. kQ8BlocksAtOnce) blocks of 32 floats from x, a vector at
// a time; ref_quantize_q8 is the scalar form they match bit for bit. A
// block's amax keeps the larger of itself and each |x| as std::max(amax,
// |x|) does, passing over a NaN. The products with 127 / amax are whole
// numbers once rounded, so their conversions and sums (in float, at most
// 16 x 127) are exact.
inline void quantize_blocks_q8(const float* x, int n, Q8Out out) {
  constexpr int L = kFloatLanes, kVecs = kQuantBlockElems / L, kHalfVecs = kVecs / 2;
  static_assert(kQuantBlockElems % (2 * L) == 0, "a half block is whole vectors");
  constexpr auto kAlign = FloatVec::arch_type::alignment();
  const auto load = [&](int b, int i) { return FloatVec::load_unaligned(x + b * kQuantBlockElems + i * L); };
  FloatVec amax[L];
  for (int b = 0; b < L; ++b) {
    amax[b] = FloatVec(0.0f);
    for (int i = 0; i < kVecs && b < n; ++i) {
      const FloatVec a = xsimd::abs(load(b, i));
      amax[b] = xsimd::select(a > amax[b], a, amax[b]);
    }
  }
  const FloatVec m = max_each(amax);  // lane b: block b's amax
  alignas(kAlign) float d[L], inv_d[L];
  alignas(kAlign) uint16_t d_half[L];
  (m / FloatVec(127.0f)).store_aligned(d);
  narrow_f16(d, d_half);
  widen_f16(reinterpret_cast<const uint8_t*>(d_half)).store_aligned(d);
  xsimd::select(m != FloatVec(0.0f), FloatVec(127.0f) / m, FloatVec(0.0f)).store_aligned(inv_d);

  FloatVec halves[2 * L];  // block b's half h: 2b + h
  for (int b = 0; b < L; ++b) {
    halves[2 * b] = halves[2 * b + 1] = FloatVec(0.0f);
    if (b >= n) continue;
    alignas(kAlign) int32_t q[kQuantBlockElems];
    for (int i = 0; i < kVecs; ++i) {
      const FloatVec r = xsimd::nearbyint(load(b, i) * FloatVec(inv_d[b]));
      halves[2 * b + i / kHalfVecs] += r;
      xsimd::batch_cast<int32_t>(r).store_aligned(q + i * L);
    }
    for (int j = 0; j < kQuantBlockElems; ++j) out.qs[b * kQuantBlockElems + j] = static_cast<int8_t>(q[j]);
  }
  alignas(kAlign) float sums[2 * L];
  sum_each(halves).store_aligned(sums);
  sum_each(halves + L).store_aligned(sums + L);
  for (int b = 0; b < n; ++b) {
    Q8Out block = out.at_block(b);
    *block.d = d[b];
    block.sum[0] = static_cast<int32_t>(sums[2 * b]);
    block.sum[1] = static_cast<int32_t>(sums[2 * b + 1]);
    block.scaled_sum[0] = d[b] * static_cast<float>(block.sum[0]);
    block.scaled_sum[1] = d[b] * static_cast<float>(block.sum[1]);
    block.scaled_sum[2] = d[b] * static_cast<float>(block.sum[0] + block.sum[1]);
  }
}

// A token's blocks in runs of kQ8BlocksAtOnce (the last may be shorter),
// the pieces every rounding kernel takes; quantize_q8 and swiglu_q8 share
// them out among the threads, so a single token is split among them too.
template <int Cols>
struct Q8Runs {
  static constexpr int kBlocks = Cols / kQuantBlockElems;
  static constexpr int kPerToken = (kBlocks + kQ8BlocksAtOnce - 1) / kQ8BlocksAtOnce;
  // The first block of run r (of any token), counted from the first token's,
  // and its blocks.
  static int64_t first(int64_t r) { return r / kPerToken * kBlocks + r % kPerToken * kQ8BlocksAtOnce; }
  static int size(int64_t r) { return std::min<int>(kQ8BlocksAtOnce, kBlocks - r % kPerToken * kQ8BlocksAtOnce); }
  // Rounds run r of x ([tokens][Cols] floats) into out (from the first token's first block).
  static void round(const float* x, int64_t r, Q8Out out) {
    quantize_blocks_q8(x + first(r) * kQuantBlockElems, size(r), out.at_block(first(r)));
  }
};

// Rounds one token's Cols floats.
template <int Cols>
void quantize_row_q8(const float* x, Q8Out out) {
  static_assert(Cols % kQuantBlockElems == 0);
  using Runs = Q8Runs<Cols>;
  for (int r = 0; r < Runs::kPerToken; ++r) Runs::round(x, r, out);
}

// out = x rounded, for [n_tokens][Cols] floats. Work-shared over runs of
// blocks.
template <int Cols>
void quantize_q8(const float* x, int n_tokens, Q8Out out) {
  static_assert(Cols % kQuantBlockElems == 0);
  using Runs = Q8Runs<Cols>;
#pragma omp for schedule(static) nowait
  for (int64_t r = 0; r < n_tokens * int64_t{Runs::kPerToken}; ++r) Runs::round(x, r, out);
  team_barrier();
}

// rmsnorm (see norm.hpp) whose result is also rounded into q8.
template <int N>
void rmsnorm_q8(const float* x, const float* weight, float* out, int n_tokens, float eps, Q8Out q8) {
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * N;
    rmsnorm_row<N>(x + at, weight, out + at, eps);
    quantize_row_q8<N>(out + at, q8.at_block(at / kQuantBlockElems));
  }
  team_barrier();
}

// swiglu (see activation.hpp) whose result is also rounded into q8.
template <int N, Glu G = Glu::Silu>
void swiglu_q8(float* gate, const float* up, int n_tokens, Q8Out q8) {
  static_assert(N % kQuantBlockElems == 0);
  using Runs = Q8Runs<N>;
#pragma omp for schedule(static) nowait
  for (int64_t r = 0; r < n_tokens * int64_t{Runs::kPerToken}; ++r) {
    const int64_t at = Runs::first(r) * kQuantBlockElems;
    swiglu_span<G>(gate + at, up + at, int64_t{Runs::size(r)} * kQuantBlockElems);
    Runs::round(gate, r, q8);
  }
  team_barrier();
}

}  // namespace kiln::kernels
