#include "codegen/synth.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/quant.hpp"

namespace kiln::synth {

namespace {

// splitmix64: small, fast, and the same sequence on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-a, a).
  float uniform(float a) { return a * (2.0f * static_cast<float>(next() >> 40) / float(1 << 24) - 1.0f); }

 private:
  uint64_t state_;
};

// A SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then
// pieces made of printable characters (with and without the word-start
// marker "▁"), shortest first, scored so shorter pieces merge first.
void add_vocab(GgufWriter& w, int n_vocab) {
  const std::string marker = "\xe2\x96\x81";  // U+2581
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // unknown, control, control
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.push_back(name);
    types.push_back(6);  // byte
  }
  tokens.push_back(marker);
  types.push_back(1);  // normal
  const std::string alphabet = "etaoinshrdlucmfwypvbgkjqxzETAOINSHRDLUCMFWYPVBGKJQXZ0123456789.,!?'\"-:;()";
  std::vector<std::string> level = {""};
  while (static_cast<int>(tokens.size()) < n_vocab) {
    std::vector<std::string> longer;
    for (const auto& prefix : level)
      for (char c : alphabet) longer.push_back(prefix + c);
    for (size_t i = 0; i < longer.size() && static_cast<int>(tokens.size()) < n_vocab; ++i) {
      for (const std::string& piece : {marker + longer[i], longer[i]}) {
        if (static_cast<int>(tokens.size()) == n_vocab) break;
        tokens.push_back(piece);
        types.push_back(1);  // normal
      }
    }
    level = std::move(longer);
  }
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t i = 259; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i - 259);

  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", std::move(tokens));
  w.add_f32_array("tokenizer.ggml.scores", scores);
  w.add_i32_array("tokenizer.ggml.token_type", types);
  w.add_u32("tokenizer.ggml.unknown_token_id", 0);
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_bool("tokenizer.ggml.add_eos_token", false);
}

// A rows x cols matrix (GGUF dims [cols, rows]) of uniform values with the
// given standard deviation, stored as `type`.
void add_matrix(GgufWriter& w, Random& rng, const std::string& name, TensorType type, int rows, int cols, float stddev) {
  const int block = traits_of(type).block_elems;
  if (cols % block != 0)
    throw Error(name + ": rows of " + std::to_string(cols) + " values are not a multiple of " +
                std::string(traits_of(type).name) + "'s block of " + std::to_string(block) + "; choose another type");
  const size_t row_size = row_bytes(type, cols);
  std::vector<uint8_t> data(row_size * static_cast<size_t>(rows));
  std::vector<float> row(static_cast<size_t>(cols));
  const float a = stddev * std::sqrt(3.0f);  // uniform [-a, a) has this standard deviation
  for (int r = 0; r < rows; ++r) {
    for (float& v : row) v = rng.uniform(a);
    kernels::quantize_row(type, row.data(), data.data() + row_size * static_cast<size_t>(r), cols);
  }
  w.add_tensor(name, type, {cols, rows}, std::move(data));
}

// Norm weights near one (not exactly one, so a missing multiply shows).
void add_norm(GgufWriter& w, Random& rng, const std::string& name, int n) {
  std::vector<uint8_t> data(sizeof(float) * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const float v = 1.0f + rng.uniform(0.1f);
    std::memcpy(data.data() + sizeof(float) * static_cast<size_t>(i), &v, sizeof v);
  }
  w.add_tensor(name, TensorType::F32, {n}, std::move(data));
}

}  // namespace

GgufWriter make_model(const SynthSpec& spec) {
  const ModelShape& s = spec.shape;
  if (s.n_head <= 0 || s.n_head_kv <= 0 || s.n_embd % s.n_head != 0 || s.n_head % s.n_head_kv != 0 || s.n_vocab < 260)
    throw Error("synthetic model: inconsistent shape (need embd % heads == 0, heads % kv_heads == 0, vocab >= 260)");
  const int head_dim = s.n_embd / s.n_head, kv_dim = head_dim * s.n_head_kv;

  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "kiln synthetic " + std::string(s.name) + " (random weights)");
  w.add_u32("llama.context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32("llama.embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32("llama.block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32("llama.feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32("llama.attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32("llama.attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.add_u32("llama.rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.add_f32("llama.rope.freq_base", spec.rope_base);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", spec.rms_eps);
  w.add_u32("llama.vocab_size", static_cast<uint32_t>(s.n_vocab));
  add_vocab(w, s.n_vocab);

  Random rng(spec.seed);
  const float in_embd = 1.0f / std::sqrt(float(s.n_embd)), in_ff = 1.0f / std::sqrt(float(s.n_ff));
  // Embedding rows with RMS near 0.5, and an output layer whose logits spread over a few units.
  add_matrix(w, rng, "token_embd.weight", spec.types.token_embd, s.n_vocab, s.n_embd, 0.5f);
  add_norm(w, rng, "output_norm.weight", s.n_embd);
  if (!spec.tied_output) add_matrix(w, rng, "output.weight", spec.types.output, s.n_vocab, s.n_embd, 3.0f * in_embd);
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    const TensorType at = spec.types.attention, ff = spec.types.feed_forward;
    add_norm(w, rng, b + "attn_norm.weight", s.n_embd);
    add_matrix(w, rng, b + "attn_q.weight", at, s.n_embd, s.n_embd, in_embd);
    add_matrix(w, rng, b + "attn_k.weight", at, kv_dim, s.n_embd, in_embd);
    add_matrix(w, rng, b + "attn_v.weight", at, kv_dim, s.n_embd, in_embd);
    add_matrix(w, rng, b + "attn_output.weight", at, s.n_embd, s.n_embd, 0.5f * in_embd);
    add_norm(w, rng, b + "ffn_norm.weight", s.n_embd);
    add_matrix(w, rng, b + "ffn_gate.weight", ff, s.n_ff, s.n_embd, in_embd);
    add_matrix(w, rng, b + "ffn_up.weight", ff, s.n_ff, s.n_embd, in_embd);
    add_matrix(w, rng, b + "ffn_down.weight", ff, s.n_embd, s.n_ff, 0.5f * in_ff);
  }
  return w;
}

}  // namespace kiln::synth
