#include "kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/activation.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels {

void ref_matmul(TensorType t, const void* w, int rows, int cols, const float* x, float* y, int n_tokens) {
  const auto* w_bytes = static_cast<const uint8_t*>(w);
  std::vector<float> row(cols);
  for (int r = 0; r < rows; ++r) {
    dequantize_row(t, w_bytes + r * row_bytes(t, cols), row.data(), cols);
    for (int tok = 0; tok < n_tokens; ++tok) {
      double sum = 0.0;
      for (int k = 0; k < cols; ++k) sum += static_cast<double>(row[k]) * x[tok * cols + k];
      y[tok * rows + r] = static_cast<float>(sum);
    }
  }
}

void ref_rmsnorm(const float* x, const float* weight, float* out, int n, int n_tokens, float eps) {
  for (int t = 0; t < n_tokens; ++t) {
    double sum_sq = 0.0;
    for (int i = 0; i < n; ++i) sum_sq += static_cast<double>(x[t * n + i]) * x[t * n + i];
    const double scale = 1.0 / std::sqrt(sum_sq / n + eps);
    for (int i = 0; i < n; ++i) out[t * n + i] = static_cast<float>(x[t * n + i] * scale * weight[i]);
  }
}

void ref_rope(RopeStyle style, float* x, int n_tokens, int n_heads, int head_dim, int rot_dim, int pos0,
              const float* inv_freq, float mscale) {
  for (int t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < n_heads; ++h) {
      float* head = x + (t * n_heads + h) * head_dim;
      for (int i = 0; i < rot_dim / 2; ++i) {
        // The angle itself is defined as a float product (as llama.cpp does).
        const float angle = static_cast<float>(pos0 + t) * inv_freq[i];
        const double c = std::cos(static_cast<double>(angle)) * mscale;
        const double s = std::sin(static_cast<double>(angle)) * mscale;
        float& a = head[rope_first(style, i)];
        float& b = head[rope_second(style, i, rot_dim / 2)];
        const double x0 = a;
        const double x1 = b;
        a = static_cast<float>(x0 * c - x1 * s);
        b = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

void ref_attention(TensorType kv_type, const float* q, const void* k_cache_in, const void* v_cache_in, float* out,
                   int n_tokens, int pos0, int n_head, int n_head_kv, int head_dim, float scale, int window,
                   const float* sinks) {
  const int q_dim = n_head * head_dim;
  const int kv_dim = n_head_kv * head_dim;
  const int64_t cache_elems = static_cast<int64_t>(pos0 + n_tokens) * kv_dim;
  std::vector<float> k_cache(cache_elems), v_cache(cache_elems);
  dequantize_row(kv_type, k_cache_in, k_cache.data(), cache_elems);
  dequantize_row(kv_type, v_cache_in, v_cache.data(), cache_elems);
  for (int t = 0; t < n_tokens; ++t) {
    const int n_pos = pos0 + t + 1;
    const int first = window > 0 ? std::max(0, n_pos - window) : 0;
    for (int h = 0; h < n_head; ++h) {
      const int kv_offset = h / (n_head / n_head_kv) * head_dim;
      const float* q_head = q + t * q_dim + h * head_dim;

      std::vector<double> weights(n_pos, 0.0);
      double max = -INFINITY;
      for (int j = first; j < n_pos; ++j) {
        double score = 0.0;
        for (int i = 0; i < head_dim; ++i)
          score += static_cast<double>(q_head[i]) * k_cache[j * kv_dim + kv_offset + i];
        weights[j] = score * scale;
        max = std::max(max, weights[j]);
      }
      const double sink = sinks ? sinks[h] : -INFINITY;
      max = std::max(max, sink);
      double sum = std::exp(sink - max);
      for (int j = first; j < n_pos; ++j) {
        weights[j] = std::exp(weights[j] - max);
        sum += weights[j];
      }

      for (int i = 0; i < head_dim; ++i) {
        double value = 0.0;
        for (int j = first; j < n_pos; ++j) value += weights[j] / sum * v_cache[j * kv_dim + kv_offset + i];
        out[t * q_dim + h * head_dim + i] = static_cast<float>(value);
      }
    }
  }
}

void ref_quantize_q8(const float* x, int n, int8_t* qs, float* d) {
  for (int b = 0; b < n / kQuantBlockElems; ++b) {
    const float* block = x + b * kQuantBlockElems;
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlockElems; ++j) amax = std::max(amax, std::fabs(block[j]));
    d[b] = fp16_to_fp32(fp32_to_fp16(amax / 127.0f));
    const float inv_d = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < kQuantBlockElems; ++j)
      qs[b * kQuantBlockElems + j] = static_cast<int8_t>(std::nearbyint(block[j] * inv_d));
  }
}

void ref_swiglu(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const double g = gate[i];
    gate[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void ref_swiglu_clamped(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const double g = std::min(gate[i], kClampedGluLimit);
    const double u = std::clamp(up[i], -kClampedGluLimit, kClampedGluLimit);
    gate[i] = static_cast<float>(g / (1.0 + std::exp(-double{kClampedGluAlpha} * g)) * (u + 1.0));
  }
}

int64_t ref_argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

void ref_softmax(float* x, int n, float sink) {
  double max = sink;
  for (int i = 0; i < n; ++i) max = std::max(max, static_cast<double>(x[i]));
  std::vector<double> e(n);
  double sum = std::exp(sink - max);
  for (int i = 0; i < n; ++i) {
    e[i] = std::exp(x[i] - max);
    sum += e[i];
  }
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(e[i] / sum);
}

}  // namespace kiln::kernels
