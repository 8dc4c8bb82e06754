#include "tests/reference_forward.hpp"

#include <cmath>

#include "kernels/quant.hpp"
#include "models/describe.hpp"

namespace kiln::test {

namespace {

// out[r] = sum_c w[r][c] * x[c], accumulated in double.
std::vector<float> matvec(const std::vector<float>& w, const std::vector<float>& x, int rows) {
  const size_t cols = x.size();
  std::vector<float> out(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (size_t c = 0; c < cols; ++c) sum += double(w[r * cols + c]) * x[c];
    out[r] = static_cast<float>(sum);
  }
  return out;
}

std::vector<float> rmsnorm(const std::vector<float>& x, const std::vector<float>& weight, float eps) {
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / double(x.size()) + eps);
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i] * scale * weight[i]);
  return out;
}

// Adjacent-pair rotation of each head's first n_rot dimensions.
void rope(std::vector<float>& v, int n_heads, int head_dim, int n_rot, float base, int pos) {
  for (int h = 0; h < n_heads; ++h)
    for (int i = 0; i < n_rot / 2; ++i) {
      const double angle = pos * std::pow(double(base), -2.0 * i / n_rot);
      const double c = std::cos(angle), s = std::sin(angle);
      float& a = v[size_t(h) * head_dim + 2 * i];
      float& b = v[size_t(h) * head_dim + 2 * i + 1];
      const double a0 = a, b0 = b;
      a = static_cast<float>(a0 * c - b0 * s);
      b = static_cast<float>(a0 * s + b0 * c);
    }
}

}  // namespace

std::vector<float> ReferenceModel::matrix(const GgufFile& file, const std::string& name) const {
  const GgufTensor* t = file.find_tensor(name);
  const int64_t cols = t->dims[0], rows = t->n_elements() / cols;
  std::vector<float> out(static_cast<size_t>(t->n_elements()));
  for (int64_t r = 0; r < rows; ++r)
    kernels::dequantize_row(t->type, t->data + r * row_bytes(t->type, cols), out.data() + r * cols, cols);
  return out;
}

ReferenceModel::ReferenceModel(const GgufFile& file) : desc_(describe_model(file)) {
  const Hyperparams& h = desc_.hp;
  token_embd_ = matrix(file, "token_embd.weight");
  output_norm_ = matrix(file, "output_norm.weight");
  output_ = h.tied_output ? token_embd_ : matrix(file, "output.weight");
  for (int l = 0; l < h.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    layers_.push_back({matrix(file, b + "attn_norm.weight"), matrix(file, b + "attn_q.weight"),
                       matrix(file, b + "attn_k.weight"), matrix(file, b + "attn_v.weight"),
                       matrix(file, b + "attn_output.weight"), matrix(file, b + "ffn_norm.weight"),
                       matrix(file, b + "ffn_gate.weight"), matrix(file, b + "ffn_up.weight"),
                       matrix(file, b + "ffn_down.weight")});
  }
}

std::vector<float> ReferenceModel::step(int32_t token) {
  const Hyperparams& h = desc_.hp;
  const int hd = h.head_dim, kv_dim = h.n_head_kv * hd, q_dim = h.n_head * hd;
  const size_t ctx = static_cast<size_t>(h.n_ctx_train);
  if (k_cache_.empty()) {
    k_cache_.assign(size_t(h.n_layer) * ctx * kv_dim, 0.0f);
    v_cache_.assign(k_cache_.size(), 0.0f);
  }
  std::vector<float> x(token_embd_.begin() + size_t(token) * h.n_embd, token_embd_.begin() + size_t(token + 1) * h.n_embd);

  for (int l = 0; l < h.n_layer; ++l) {
    const Layer& w = layers_[l];
    std::vector<float> xn = rmsnorm(x, w.attn_norm, h.rms_eps);
    std::vector<float> q = matvec(w.wq, xn, q_dim), k = matvec(w.wk, xn, kv_dim), v = matvec(w.wv, xn, kv_dim);
    rope(q, h.n_head, hd, h.n_rot, h.rope_base, pos_);
    rope(k, h.n_head_kv, hd, h.n_rot, h.rope_base, pos_);
    float* k_layer = &k_cache_[size_t(l) * ctx * kv_dim];
    float* v_layer = &v_cache_[size_t(l) * ctx * kv_dim];
    std::copy(k.begin(), k.end(), k_layer + size_t(pos_) * kv_dim);
    std::copy(v.begin(), v.end(), v_layer + size_t(pos_) * kv_dim);

    std::vector<float> att(static_cast<size_t>(q_dim), 0.0f);
    for (int head = 0; head < h.n_head; ++head) {
      const int kv_head = head / (h.n_head / h.n_head_kv);
      std::vector<double> score(static_cast<size_t>(pos_ + 1));
      double max_score = -INFINITY;
      for (int p = 0; p <= pos_; ++p) {
        double dot = 0;
        for (int i = 0; i < hd; ++i) dot += double(q[head * hd + i]) * k_layer[size_t(p) * kv_dim + kv_head * hd + i];
        score[p] = dot / std::sqrt(double(hd));
        max_score = std::max(max_score, score[p]);
      }
      double total = 0;
      for (double& s : score) total += (s = std::exp(s - max_score));
      for (int i = 0; i < hd; ++i) {
        double sum = 0;
        for (int p = 0; p <= pos_; ++p) sum += score[p] / total * v_layer[size_t(p) * kv_dim + kv_head * hd + i];
        att[head * hd + i] = static_cast<float>(sum);
      }
    }
    const std::vector<float> attn_out = matvec(w.wo, att, h.n_embd);
    for (int i = 0; i < h.n_embd; ++i) x[i] += attn_out[i];

    xn = rmsnorm(x, w.ffn_norm, h.rms_eps);
    std::vector<float> gate = matvec(w.w_gate, xn, h.n_ff);
    const std::vector<float> up = matvec(w.w_up, xn, h.n_ff);
    for (int i = 0; i < h.n_ff; ++i) gate[i] = static_cast<float>(gate[i] / (1.0 + std::exp(-double(gate[i]))) * up[i]);
    const std::vector<float> ffn_out = matvec(w.w_down, gate, h.n_embd);
    for (int i = 0; i < h.n_embd; ++i) x[i] += ffn_out[i];
  }
  ++pos_;
  return matvec(output_, rmsnorm(x, output_norm_, h.rms_eps), h.n_vocab);
}

}  // namespace kiln::test
