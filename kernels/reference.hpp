// Plain scalar versions of the kernels, sized at run time and accumulating in
// double, that tests compare the fast kernels against. Same argument meanings
// as the kernels they mirror.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/rope.hpp"

#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

void ref_matmul(TensorType t, const void* w, int rows, int cols, const float* x, float* y, int n_tokens);
void ref_rmsnorm(const float* x, const float* weight, float* out, int n, int n_tokens, float eps);
void ref_rope(RopeStyle style, float* x, int n_tokens, int n_heads, int head_dim, int rot_dim, int pos0,
              const float* inv_freq, float mscale);
// k_cache and v_cache hold elements of kv_type (F32, or F16 as raw bits);
// scores are q . k * scale, over the last `window` positions when window > 0;
// sinks (per head, or null) join each head's softmax with no value.
void ref_attention(TensorType kv_type, const float* q, const void* k_cache, const void* v_cache, float* out,
                   int n_tokens, int pos0, int n_head, int n_head_kv, int head_dim, float scale, int window,
                   const float* sinks = nullptr);
void ref_swiglu(float* gate, const float* up, int n);
void ref_swiglu_clamped(float* gate, const float* up, int n);
// x rounded to Q8 blocks as ggml rounds activations (q8_activations.hpp):
// n / 32 blocks, each d[b] (an fp16's value) and qs[32 * b ..].
void ref_quantize_q8(const float* x, int n, int8_t* qs, float* d);
void ref_softmax(float* x, int n, float sink = -INFINITY);
// The first index of the largest of x[0..n): the first value strictly greater than all before it.
int64_t ref_argmax(const float* x, int64_t n);

}  // namespace kiln::kernels
