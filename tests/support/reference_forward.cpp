#include "tests/support/reference_forward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/error/error.hpp"
#include "tests/support/reference_dequant.hpp"

namespace kiln::test {

namespace {

// x as ggml (and kiln) round it before multiplying Q8_0 or Q4_0 weights:
// blocks of 32 with scale d = amax / 127 stored as fp16, each value
// round-to-nearest-even(x * 127 / amax) steps of d. kiln rounds the input of
// K-quant weights the same way (llama.cpp uses blocks of 256 there, Q8_K).
std::vector<float> round_to_q8_0(std::vector<float> x) {
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t j = b; j < b + 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = round_to_half(amax / 127.0f);
    const float inv_d = amax != 0 ? 127.0f / amax : 0.0f;
    for (size_t j = b; j < b + 32; ++j) x[j] = d * std::nearbyint(x[j] * inv_d);
  }
  return x;
}

// x rounded to bfloat16 as ggml's GGML_FP32_TO_BF16 rounds it: to nearest,
// ties to even, on the float's bits; a NaN stays a (quiet) NaN.
std::vector<float> round_to_bf16(std::vector<float> x) {
  for (float& v : x) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
      bits = (bits | 0x00400000u) & 0xffff0000u;
    else
      bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&v, &bits, sizeof v);
  }
  return x;
}

std::vector<float> rounded_input(const Matrix& w, const std::vector<float>& x) {
  switch (w.rounds_input) {
    case InputRounding::Q8Blocks: return round_to_q8_0(x);
    case InputRounding::BF16: return round_to_bf16(x);
    case InputRounding::None: break;
  }
  return x;
}

// out[r] = sum_c w[r][c] * x[c], accumulated in double.
std::vector<float> matvec(const Matrix& w, const std::vector<float>& x_in, int rows) {
  const std::vector<float> x = rounded_input(w, x_in);
  const size_t cols = x.size();
  std::vector<float> out(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (size_t c = 0; c < cols; ++c) sum += double(w.values[r * cols + c]) * x[c];
    out[r] = static_cast<float>(sum);
  }
  return out;
}

std::vector<float> rmsnorm(const std::vector<float>& x, const Matrix& norm, double eps) {
  const std::vector<float>& weight = norm.values;
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / double(x.size()) + eps);
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i] * scale * weight[i]);
  return out;
}

void add(std::vector<float>& x, const Matrix& bias) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += bias.values[i];
}

// Each head of x normalized on its own with the one weight all heads share.
void head_rmsnorm(std::vector<float>& x, int head_dim, const Matrix& norm, double eps) {
  for (size_t at = 0; at < x.size(); at += size_t(head_dim)) {
    const std::vector<float> head(x.begin() + at, x.begin() + at + head_dim);
    const std::vector<float> normalized = rmsnorm(head, norm, eps);
    std::copy(normalized.begin(), normalized.end(), x.begin() + at);
  }
}

// GELU's tanh form as ggml's CPU backend computes it (GGML_GELU_FP16): below
// -10 zero, from 10 on the input, else the input rounded to F16, its GELU in
// float rounded to F16 again (ggml_table_gelu_f16).
float ggml_gelu(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  const float h = round_to_half(x);
  return round_to_half(0.5f * h * (1.0f + std::tanh(0.79788456080286535587989211986876f * h * (1.0f + 0.044715f * h * h))));
}

// YaRN's pair index for a number of turns over the original context
// (ggml_rope_yarn_corr_dim).
double yarn_pair(const ReferenceHparams& h, double turns, double base) {
  constexpr double kPi = 3.14159265358979323846;
  return h.n_rot * std::log(h.n_ctx_orig / (turns * 2 * kPi)) / (2 * std::log(base));
}

// Rotation of each head's first n_rot dimensions: adjacent pairs (llama) or
// halves (NEOX, qwen2); pair i turns by pos * scale * base^(-2i/n_rot) / factor[i],
// and the pair is scaled by the attention factor. With YaRN (ggml's
// rope_yarn, ext_factor 1), the scaled angle and the unscaled one are mixed
// by a ramp that keeps the high-frequency pairs unscaled.
void rope(std::vector<float>& v, int n_heads, const ReferenceHparams& h, const std::vector<float>& factors, int pos,
          bool sliding) {
  const double base = sliding ? h.rope_base_swa : h.rope_base;
  const double position_scale = sliding && !h.gpt_oss ? 1.0 : h.rope_position_scale;
  const double low = std::max(0.0, std::floor(yarn_pair(h, h.yarn_beta_fast, base)));
  const double high = std::min(double(h.n_rot - 1), std::ceil(yarn_pair(h, h.yarn_beta_slow, base)));
  for (int head = 0; head < n_heads; ++head)
    for (int i = 0; i < h.n_rot / 2; ++i) {
      const double factor = factors.empty() || sliding ? 1.0 : factors[i];
      const double extrapolated = pos * std::pow(base, -2.0 * i / h.n_rot) / factor;
      double angle = extrapolated * position_scale;
      if (h.yarn) {
        const double kept = 1 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
        angle = angle * (1 - kept) + extrapolated * kept;
      }
      // ggml_rope_ext's attn_factor scales both (ggml-cpu rope_yarn: mscale).
      const double c = std::cos(angle) * h.rope_attn_factor, s = std::sin(angle) * h.rope_attn_factor;
      const size_t first = h.rope_halves ? i : 2 * i, second = h.rope_halves ? i + h.n_rot / 2 : 2 * i + 1;
      float& a = v[size_t(head) * h.head_dim + first];
      float& b = v[size_t(head) * h.head_dim + second];
      const double a0 = a, b0 = b;
      a = static_cast<float>(a0 * c - b0 * s);
      b = static_cast<float>(a0 * s + b0 * c);
    }
}

void round_to_f16(std::vector<float>& x) {
  for (float& v : x) v = round_to_half(v);
}

// A tensor's values, and how what multiplies it is rounded (input_rounding).
Matrix matrix(const GgufFile& file, const std::string& name) {
  const GgufTensor* t = file.find_tensor(name);
  if (!t) throw Error("reference: tensor '" + name + "' is missing");
  return {reference_dequantize(*t), input_rounding(t->ggml_type)};
}

// Rows [first, first + count) of a matrix `cols` wide: one of the matrices a
// fused tensor holds.
Matrix rows(const Matrix& m, int cols, int first, int count) {
  const auto begin = m.values.begin() + ptrdiff_t(first) * cols;
  return {std::vector<float>(begin, begin + ptrdiff_t(count) * cols), m.rounds_input};
}

}  // namespace

ReferenceModel::ReferenceModel(const GgufFile& file, bool f16_kv, int n_ctx)
    : hp_(read_reference_hparams(file)), f16_kv_(f16_kv), n_ctx_(n_ctx ? n_ctx : hp_.n_ctx) {
  const ReferenceHparams& h = hp_;
  token_embd_ = matrix(file, "token_embd.weight");
  output_norm_ = matrix(file, "output_norm.weight");
  output_ = h.tied_output ? token_embd_ : matrix(file, "output.weight");
  if (h.rope_freqs) rope_factors_ = matrix(file, "rope_freqs.weight").values;
  // llama_model::get_rope_factors: the long factors when the context exceeds the original one.
  if (h.longrope) {
    const char* chosen = n_ctx_ > h.n_ctx_orig ? "rope_factors_long.weight" : "rope_factors_short.weight";
    rope_factors_ = matrix(file, chosen).values;
  }
  const int q_dim = h.n_head * h.head_dim, kv_dim = h.n_head_kv * h.head_dim;
  for (int l = 0; l < h.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto optional = [&](bool present, const char* name) { return present ? matrix(file, b + name) : Matrix{}; };
    // build_qkv: a fused attn_qkv where the file has one (Q's rows, K's, V's), else three matrices.
    Matrix wq, wk, wv;
    if (file.find_tensor(b + "attn_qkv.weight")) {
      const Matrix qkv = matrix(file, b + "attn_qkv.weight");
      wq = rows(qkv, h.n_embd, 0, q_dim);
      wk = rows(qkv, h.n_embd, q_dim, kv_dim);
      wv = rows(qkv, h.n_embd, q_dim + kv_dim, kv_dim);
    } else {
      wq = matrix(file, b + "attn_q.weight");
      wk = matrix(file, b + "attn_k.weight");
      wv = matrix(file, b + "attn_v.weight");
    }
    const bool dense = h.n_expert == 0, shared = h.n_ff_shexp > 0;
    Matrix w_gate, w_up;
    if (h.gate_up_fused) {
      const Matrix gate_up = matrix(file, b + "ffn_up.weight");
      w_gate = rows(gate_up, h.n_embd, 0, h.n_ff);
      w_up = rows(gate_up, h.n_embd, h.n_ff, h.n_ff);
    } else {
      w_gate = optional(dense, "ffn_gate.weight");
      w_up = optional(dense, "ffn_up.weight");
    }
    // gpt-oss: post_attention_norm is the experts' input norm (openai-moe.cpp).
    const char* ffn_norm = h.gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight";
    layers_.push_back({matrix(file, b + "attn_norm.weight"), std::move(wq), std::move(wk), std::move(wv),
                       optional(h.qkv_bias, "attn_q.bias"), optional(h.qkv_bias, "attn_k.bias"),
                       optional(h.qkv_bias, "attn_v.bias"), matrix(file, b + "attn_output.weight"),
                       matrix(file, b + ffn_norm), std::move(w_gate), std::move(w_up),
                       optional(dense, "ffn_down.weight"), optional(h.qk_norm, "attn_q_norm.weight"),
                       optional(h.qk_norm, "attn_k_norm.weight"), optional(h.gemma, "post_attention_norm.weight"),
                       optional(h.gemma, "post_ffw_norm.weight"), optional(!dense, "ffn_gate_inp.weight"), {},
                       optional(h.gpt_oss, "attn_output.bias"), optional(h.gpt_oss, "attn_sinks.weight"),
                       optional(h.gpt_oss, "ffn_gate_inp.bias"), optional(shared, "ffn_gate_inp_shexp.weight"),
                       optional(shared, "ffn_gate_shexp.weight"), optional(shared, "ffn_up_shexp.weight"),
                       optional(shared, "ffn_down_shexp.weight")});
    // The experts' tensors are [cols, rows, n_expert]: expert e's rows follow expert e - 1's.
    if (!dense) {
      const Matrix gate = matrix(file, b + "ffn_gate_exps.weight"), up = matrix(file, b + "ffn_up_exps.weight"),
                   down = matrix(file, b + "ffn_down_exps.weight");
      // Their biases, [width, n_expert]: expert e's vector follows expert e - 1's.
      const Matrix gate_b = optional(h.gpt_oss, "ffn_gate_exps.bias"), up_b = optional(h.gpt_oss, "ffn_up_exps.bias"),
                   down_b = optional(h.gpt_oss, "ffn_down_exps.bias");
      auto slice = [](const Matrix& m, int e, int n) {
        if (m.values.empty()) return std::vector<float>{};
        return std::vector<float>(m.values.begin() + ptrdiff_t(e) * n, m.values.begin() + ptrdiff_t(e + 1) * n);
      };
      for (int e = 0; e < h.n_expert; ++e)
        layers_.back().experts.push_back({rows(gate, h.n_embd, e * h.n_ff_exp, h.n_ff_exp),
                                          rows(up, h.n_embd, e * h.n_ff_exp, h.n_ff_exp),
                                          rows(down, h.n_ff_exp, e * h.n_embd, h.n_embd), slice(gate_b, e, h.n_ff_exp),
                                          slice(up_b, e, h.n_ff_exp), slice(down_b, e, h.n_embd)});
    }
  }
}

// The feed-forward of the normalized residual xn: a dense one (SwiGLU, or
// GELU for gemma3), or a mixture of experts as llama.cpp's build_moe_ffn
// computes it for qwen3moe: softmax over the router's logits, the
// n_expert_used most probable experts (ggml_argsort_top_k: descending), their
// probabilities divided by their sum (clamped below at 6.103515625e-5) as
// weights, and each selected expert's SwiGLU output times its weight, summed
// in that order. qwen2moe's (qwen2moe.cpp): the same without dividing by the
// sum, plus the shared expert: a SwiGLU feed-forward of xn (build_ffn,
// LLM_FFN_SILU, LLM_FFN_PAR) times sigmoid(ffn_gate_inp_shexp . xn), added
// to the experts' sum.
//
// gpt-oss's (openai-moe.cpp: SOFTMAX_WEIGHT gating, LLM_FFN_SWIGLU_OAI_MOE):
// the router's logits plus its bias, the n_expert_used largest, a softmax
// over those alone as weights; each expert's gate and up plus their biases,
// ggml_swiglu_oai (alpha 1.702, limit 7: min(gate, 7) * sigmoid(1.702 *
// that) * (clamp(up, -7, 7) + 1)), its down projection plus its bias.
std::vector<float> ReferenceModel::feed_forward(const Layer& w, const std::vector<float>& xn) const {
  const ReferenceHparams& h = hp_;
  auto plus = [](std::vector<float> x, const std::vector<float>& bias) {
    for (size_t i = 0; i < bias.size(); ++i) x[i] += bias[i];
    return x;
  };
  auto swiglu_ffn = [&](const Matrix& w_gate, const Matrix& w_up, const Matrix& w_down, int n_ff,
                        const Expert* biases = nullptr) {
    std::vector<float> gate = matvec(w_gate, xn, n_ff);
    std::vector<float> up = matvec(w_up, xn, n_ff);
    if (biases) {
      gate = plus(gate, biases->gate_bias);
      up = plus(up, biases->up_bias);
    }
    for (int i = 0; i < n_ff; ++i) {
      if (h.gpt_oss) {
        const double g = std::min(gate[i], 7.0f), u = std::clamp(up[i], -7.0f, 7.0f);
        gate[i] = static_cast<float>(g / (1.0 + std::exp(-1.702 * g)) * (u + 1));
      } else {
        gate[i] = h.gemma ? ggml_gelu(gate[i]) * up[i]
                          : static_cast<float>(gate[i] / (1.0 + std::exp(-double(gate[i]))) * up[i]);
      }
    }
    const std::vector<float> down = matvec(w_down, gate, h.n_embd);
    return biases ? plus(down, biases->down_bias) : down;
  };
  if (h.n_expert == 0) return swiglu_ffn(w.w_gate, w.w_up, w.w_down, h.n_ff);

  std::vector<float> logits = matvec(w.router, xn, h.n_expert);
  if (h.gpt_oss) {
    logits = plus(logits, w.router_bias.values);
    std::vector<int> order(logits.size());
    for (size_t e = 0; e < order.size(); ++e) order[e] = int(e);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    const double top = logits[order[0]];
    double total = 0;
    std::vector<double> weight(size_t(h.n_expert_used));
    for (int i = 0; i < h.n_expert_used; ++i) total += (weight[i] = std::exp(logits[order[i]] - top));
    std::vector<double> sum(size_t(h.n_embd), 0.0);
    for (int i = 0; i < h.n_expert_used; ++i) {
      const Expert& expert = w.experts[order[i]];
      const std::vector<float> out = swiglu_ffn(expert.gate, expert.up, expert.down, h.n_ff_exp, &expert);
      for (int j = 0; j < h.n_embd; ++j) sum[j] += weight[i] / total * out[j];
    }
    return std::vector<float>(sum.begin(), sum.end());
  }
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<double> probs(logits.size());
  double total = 0;
  for (size_t e = 0; e < probs.size(); ++e) total += (probs[e] = std::exp(logits[e] - max_logit));
  for (double& p : probs) p /= total;
  std::vector<int> order(probs.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = int(e);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
  double chosen = 0;
  for (int i = 0; i < h.n_expert_used; ++i) chosen += probs[order[i]];
  chosen = h.expert_weights_norm ? std::max(chosen, 6.103515625e-5) : 1.0;
  std::vector<double> sum(size_t(h.n_embd), 0.0);
  for (int i = 0; i < h.n_expert_used; ++i) {
    const Expert& expert = w.experts[order[i]];
    const std::vector<float> out = swiglu_ffn(expert.gate, expert.up, expert.down, h.n_ff_exp);
    for (int j = 0; j < h.n_embd; ++j) sum[j] += probs[order[i]] / chosen * out[j];
  }
  if (h.n_ff_shexp > 0) {
    const double gate = 1.0 / (1.0 + std::exp(-double(matvec(w.shexp_gate_inp, xn, 1)[0])));
    const std::vector<float> out = swiglu_ffn(w.shexp_gate, w.shexp_up, w.shexp_down, h.n_ff_shexp);
    for (int j = 0; j < h.n_embd; ++j) sum[j] += gate * out[j];
  }
  return std::vector<float>(sum.begin(), sum.end());
}

std::vector<float> ReferenceModel::step(int32_t token) {
  const ReferenceHparams& h = hp_;
  const int hd = h.head_dim, kv_dim = h.n_head_kv * hd, q_dim = h.n_head * hd;
  const size_t ctx = static_cast<size_t>(n_ctx_);
  if (pos_ >= n_ctx_) throw Error("reference: position " + std::to_string(pos_) + " is past the context");
  if (k_cache_.empty()) {
    k_cache_.assign(size_t(h.n_layer) * ctx * kv_dim, 0.0f);
    v_cache_.assign(k_cache_.size(), 0.0f);
  }
  const std::vector<float>& embd = token_embd_.values;
  std::vector<float> x(embd.begin() + size_t(token) * h.n_embd, embd.begin() + size_t(token + 1) * h.n_embd);
  if (h.gemma)
    for (float& v : x) v *= std::sqrt(static_cast<float>(h.n_embd));

  for (int l = 0; l < h.n_layer; ++l) {
    const Layer& w = layers_[l];
    std::vector<float> xn = rmsnorm(x, w.attn_norm, h.rms_eps);
    std::vector<float> q = matvec(w.wq, xn, q_dim), k = matvec(w.wk, xn, kv_dim), v = matvec(w.wv, xn, kv_dim);
    if (h.qkv_bias) {
      add(q, w.bq);
      add(k, w.bk);
      add(v, w.bv);
    }
    if (h.qk_norm) {
      head_rmsnorm(q, hd, w.q_norm, h.rms_eps);
      head_rmsnorm(k, hd, w.k_norm, h.rms_eps);
    }
    const bool sliding = h.sliding(l);
    if (h.rope(l)) {
      rope(q, h.n_head, h, rope_factors_, pos_, sliding);
      rope(k, h.n_head_kv, h, rope_factors_, pos_, sliding);
    }
    if (f16_kv_) {
      round_to_f16(k);
      round_to_f16(v);
    }
    float* k_layer = &k_cache_[size_t(l) * ctx * kv_dim];
    float* v_layer = &v_cache_[size_t(l) * ctx * kv_dim];
    std::copy(k.begin(), k.end(), k_layer + size_t(pos_) * kv_dim);
    std::copy(v.begin(), v.end(), v_layer + size_t(pos_) * kv_dim);

    std::vector<float> att(static_cast<size_t>(q_dim), 0.0f);
    for (int head = 0; head < h.n_head; ++head) {
      const int kv_head = head / (h.n_head / h.n_head_kv);
      // A sliding layer sees positions p with pos - p < n_swa (llama_hparams::is_masked_swa).
      const int first = sliding ? std::max(0, pos_ - h.n_swa + 1) : 0;
      std::vector<double> score(static_cast<size_t>(pos_ + 1), 0.0);
      double max_score = -INFINITY;
      for (int p = first; p <= pos_; ++p) {
        double dot = 0;
        for (int i = 0; i < hd; ++i) dot += double(q[head * hd + i]) * k_layer[size_t(p) * kv_dim + kv_head * hd + i];
        score[p] = dot * h.attn_scale;
        max_score = std::max(max_score, score[p]);
      }
      // gpt-oss's sink: one more logit in the softmax, with no value (ggml_soft_max_ext's sinks).
      const double sink = h.gpt_oss ? w.sinks.values[head] : -INFINITY;
      max_score = std::max(max_score, sink);
      double total = std::exp(sink - max_score);
      for (int p = first; p <= pos_; ++p) total += (score[p] = std::exp(score[p] - max_score));
      for (int i = 0; i < hd; ++i) {
        double sum = 0;
        for (int p = first; p <= pos_; ++p) sum += score[p] / total * v_layer[size_t(p) * kv_dim + kv_head * hd + i];
        att[head * hd + i] = static_cast<float>(sum);
      }
    }
    std::vector<float> attn_out = matvec(w.wo, att, h.n_embd);
    if (h.gpt_oss) add(attn_out, w.bo);
    if (h.gemma) attn_out = rmsnorm(attn_out, w.attn_post_norm, h.rms_eps);
    for (int i = 0; i < h.n_embd; ++i) x[i] += attn_out[i];

    std::vector<float> ffn_out = feed_forward(w, rmsnorm(x, w.ffn_norm, h.rms_eps));
    if (h.gemma) ffn_out = rmsnorm(ffn_out, w.ffn_post_norm, h.rms_eps);
    for (int i = 0; i < h.n_embd; ++i) x[i] += ffn_out[i];
  }
  ++pos_;
  std::vector<float> logits = matvec(output_, rmsnorm(x, output_norm_, h.rms_eps), h.n_vocab);
  if (h.final_logit_softcap > 0)
    for (float& v : logits) v = static_cast<float>(h.final_logit_softcap * std::tanh(v / h.final_logit_softcap));
  return logits;
}

}  // namespace kiln::test
