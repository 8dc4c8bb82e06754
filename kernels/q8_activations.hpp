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

// Rounds one block of 32 floats, a vector at a time (ref_quantize_q8 is the
// scalar form it matches bit for bit). amax keeps the larger of itself and
// each |x| as std::max(amax, |x|) does: a NaN is passed over. Products with
// 127 / amax are whole numbers after the rounding, so converting them to
// integers is exact.
inline void quantize_block_q8(const float* x, Q8Out out) {
  constexpr int L = kFloatLanes, kVecs = kQuantBlockElems / L;
  static_assert(kQuantBlockElems % (2 * L) == 0, "a half block is whole vectors");
  using IntVec = xsimd::batch<int32_t>;
  FloatVec v[kVecs];
  FloatVec amax(0.0f);
  for (int i = 0; i < kVecs; ++i) {
    v[i] = FloatVec::load_unaligned(x + i * L);
    const FloatVec a = xsimd::abs(v[i]);
    amax = xsimd::select(a > amax, a, amax);
  }
  const float m = max_of_lanes(amax);
  *out.d = fp16_to_fp32(fp32_to_fp16(m / 127.0f));
  const FloatVec inv_d(m != 0.0f ? 127.0f / m : 0.0f);
  alignas(IntVec::arch_type::alignment()) int32_t q[kQuantBlockElems];
  for (int h = 0; h < 2; ++h) {
    IntVec sum(0);
    for (int i = h * kVecs / 2; i < (h + 1) * kVecs / 2; ++i) {
      const IntVec qi = xsimd::batch_cast<int32_t>(xsimd::nearbyint(v[i] * inv_d));
      qi.store_aligned(q + i * L);
      sum += qi;
    }
    out.sum[h] = xsimd::hadd(sum);
  }
  for (int j = 0; j < kQuantBlockElems; ++j) out.qs[j] = static_cast<int8_t>(q[j]);
  out.scaled_sum[0] = *out.d * static_cast<float>(out.sum[0]);
  out.scaled_sum[1] = *out.d * static_cast<float>(out.sum[1]);
  out.scaled_sum[2] = *out.d * static_cast<float>(out.sum[0] + out.sum[1]);
}

// Rounds one token's Cols floats.
template <int Cols>
void quantize_row_q8(const float* x, Q8Out out) {
  static_assert(Cols % kQuantBlockElems == 0);
  for (int b = 0; b < Cols / kQuantBlockElems; ++b) quantize_block_q8(x + b * kQuantBlockElems, out.at_block(b));
}

// out = x rounded, for [n_tokens][Cols] floats. Work-shared over blocks, so a
// single token is split among the threads too.
template <int Cols>
void quantize_q8(const float* x, int n_tokens, Q8Out out) {
  static_assert(Cols % kQuantBlockElems == 0);
  const int64_t n_blocks = static_cast<int64_t>(n_tokens) * (Cols / kQuantBlockElems);
#pragma omp for schedule(static) nowait
  for (int64_t b = 0; b < n_blocks; ++b) quantize_block_q8(x + b * kQuantBlockElems, out.at_block(b));
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
  const int64_t n_blocks = static_cast<int64_t>(n_tokens) * (N / kQuantBlockElems);
#pragma omp for schedule(static) nowait
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int64_t at = b * kQuantBlockElems;
    swiglu_span<G>(gate + at, up + at, kQuantBlockElems);
    quantize_block_q8(gate + at, q8.at_block(b));
  }
  team_barrier();
}

}  // namespace kiln::kernels
