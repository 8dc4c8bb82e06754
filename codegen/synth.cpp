#include "codegen/synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/quant.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/describe.hpp"

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

// Every tokenizer.* key of `from`, as it is there.
void copy_vocab(GgufWriter& w, const GgufFile& from, int n_vocab) {
  const int count = token_count(from);
  if (count != n_vocab)
    throw Error("synthetic model: " + from.path() + " has " + std::to_string(count) + " tokens, the shape " +
                std::to_string(n_vocab));
  for (const auto& [key, value] : from.metadata())
    if (key.starts_with("tokenizer.")) w.add(key, value);
}

// A rows x cols matrix (GGUF dims [cols, rows]) of uniform values with the
// given standard deviation, stored as `type`; or `stack` such matrices back
// to back (dims [cols, rows, stack]: a mixture's experts).
void add_matrix(GgufWriter& w, Random& rng, const std::string& name, TensorType type, int rows, int cols, float stddev,
                int stack = 0) {
  const int block = traits_of(type).block_elems;
  if (cols % block != 0)
    throw Error(name + ": rows of " + std::to_string(cols) + " values are not a multiple of " +
                std::string(traits_of(type).name) + "'s block of " + std::to_string(block) + "; choose another type");
  const size_t row_size = row_bytes(type, cols);
  const int all_rows = rows * std::max(stack, 1);
  std::vector<uint8_t> data(row_size * static_cast<size_t>(all_rows));
  std::vector<float> row(static_cast<size_t>(cols));
  const float a = stddev * std::sqrt(3.0f);  // uniform [-a, a) has this standard deviation
  for (int r = 0; r < all_rows; ++r) {
    for (float& v : row) v = rng.uniform(a);
    kernels::quantize_row(type, row.data(), data.data() + row_size * static_cast<size_t>(r), cols);
  }
  std::vector<int64_t> dims = {cols, rows};
  if (stack) dims.push_back(stack);
  w.add_tensor(name, type, std::move(dims), std::move(data));
}

// F32 values of the given shape (default: a vector of all of them).
void add_floats(GgufWriter& w, const std::string& name, const std::vector<float>& values,
                std::vector<int64_t> dims = {}) {
  std::vector<uint8_t> data(sizeof(float) * values.size());
  std::memcpy(data.data(), values.data(), data.size());
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  w.add_tensor(name, TensorType::F32, std::move(dims), std::move(data));
}

// Floats of center + uniform noise, of the given shape: norm weights near
// one (not exactly one, so a missing multiply shows), biases near zero
// (a mixture's: one vector per expert), attention sinks near one.
void add_vector(GgufWriter& w, Random& rng, const std::string& name, std::vector<int64_t> dims, float center,
                float spread) {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = center + rng.uniform(spread);
  add_floats(w, name, values, std::move(dims));
}

void add_norm(GgufWriter& w, Random& rng, const std::string& name, int n) {
  add_vector(w, rng, name, {n}, 1.0f, 0.1f);
}

// Llama 3.1's RoPE frequency factors (scaling factor 8, low/high frequency
// factors 1 and 4, original context 8192), one divisor per rotated pair.
void add_rope_freqs(GgufWriter& w, int n_rot, float base) {
  constexpr double kFactor = 8, kLowFreqFactor = 1, kHighFreqFactor = 4, kOriginalContext = 8192;
  constexpr double kPi = 3.14159265358979323846;
  std::vector<float> factors(static_cast<size_t>(n_rot / 2));
  for (size_t i = 0; i < factors.size(); ++i) {
    const double wavelength = 2 * kPi * std::pow(double(base), 2.0 * double(i) / n_rot);
    const double low_freq_wavelength = kOriginalContext / kLowFreqFactor;
    const double high_freq_wavelength = kOriginalContext / kHighFreqFactor;
    double factor = 1;
    if (wavelength > low_freq_wavelength) {
      factor = kFactor;
    } else if (wavelength > high_freq_wavelength) {
      const double smooth = (kOriginalContext / wavelength - kLowFreqFactor) / (kHighFreqFactor - kLowFreqFactor);
      factor = 1 / ((1 - smooth) / kFactor + smooth);
    }
    factors[i] = static_cast<float>(factor);
  }
  add_floats(w, "rope_freqs.weight", factors);
}

// LongRoPE's factors, one divisor per rotated pair, growing towards the low
// frequencies as Phi's do: the short ones near 1, the long ones up to about
// 1 + n_rot / 2, so that a model choosing the wrong ones rotates visibly
// differently. And the keys llama.cpp's converter writes with them: the
// original context, and the attention factor it computes from the ratio of
// the context length to it.
void add_longrope(GgufWriter& w, const std::string& prefix, int n_rot, int n_ctx, int original_context) {
  std::vector<float> long_factors(static_cast<size_t>(n_rot / 2)), short_factors(long_factors.size());
  for (size_t i = 0; i < long_factors.size(); ++i) {
    long_factors[i] = 1.0f + 0.5f * static_cast<float>(i) * (1.0f + static_cast<float>(i) / n_rot);
    short_factors[i] = 1.0f + 0.02f * static_cast<float>(i);
  }
  add_floats(w, "rope_factors_long.weight", long_factors);
  add_floats(w, "rope_factors_short.weight", short_factors);
  const double scale = double(n_ctx) / original_context;
  const double attn_factor = scale > 1 ? std::sqrt(1 + std::log(scale) / std::log(double(original_context))) : 1;
  w.add_u32(prefix + "rope.scaling.original_context_length", static_cast<uint32_t>(original_context));
  w.add_f32(prefix + "rope.scaling.attn_factor", static_cast<float>(attn_factor));
}

// gpt-oss's YaRN scaling as its files have it: factor 32 over an original
// context of 4096 (llama.cpp's default betas, 32 and 1, not written).
void add_gpt_oss_yarn(GgufWriter& w, const std::string& prefix) {
  w.add_string(prefix + "rope.scaling.type", "yarn");
  w.add_f32(prefix + "rope.scaling.factor", 32.0f);
  w.add_u32(prefix + "rope.scaling.original_context_length", 4096);
}

// The weight type of a block tensor holding these kBlockTensors matrices
// (one, or a fused tensor's parts): the "_M" mixes give attn_v and ffn_down
// (a mixture's ffn_down_exps too) more bits in some layers, and a fused
// tensor holding one of them the same (attn_qkv: llama-quantize's
// category_is_attn_v). A mixture's router and its shared expert's gate (a
// matrix of one row) stay F32, as llama-quantize leaves them.
TensorType matrix_type(const WeightTypes& types, bool more_bits_layer, std::span<const std::string_view> matrices) {
  for (const std::string_view m : matrices)
    if (const std::string_view role = decoder::matrix_role(decoder::block_tensor(m));
        more_bits_layer && (role == "attn_v" || role.starts_with("ffn_down")))
      return *types.more_bits;
  const std::string_view first = matrices.front();
  if (first.starts_with("ffn_gate_inp")) return TensorType::F32;
  if (first.ends_with("_exps.weight")) return types.experts.value_or(types.feed_forward);
  return first.starts_with("ffn_") ? types.feed_forward : types.attention;
}

}  // namespace

int token_count(const GgufFile& vocabulary) {
  const GgufValue* tokens = vocabulary.find("tokenizer.ggml.tokens");
  const auto* array = tokens ? std::get_if<GgufArray>(&tokens->value) : nullptr;
  if (!array || array->elem_type != GgufValueType::STRING || array->count == 0 || array->count > (1u << 30))
    throw Error(vocabulary.path() + ": no tokenizer (tokenizer.ggml.tokens, an array of strings, is missing)");
  return static_cast<int>(array->count);
}

WeightTypes q4_k_m_types() {
  WeightTypes t;
  t.token_embd = t.attention = t.feed_forward = TensorType::Q4_K;
  t.output = TensorType::Q6_K;
  t.more_bits = TensorType::Q6_K;
  return t;
}

// Integer division rounds down as llama.cpp's does; layer - first_eighth
// is never negative where the modulo is reached.
bool gets_more_bits(int layer, int n_layer) {
  const int first_eighth = n_layer / 8;
  return layer < first_eighth || layer >= 7 * n_layer / 8 || (layer - first_eighth) % 3 == 2;
}

GgufWriter make_model(const SynthSpec& spec) {
  const ModelShape& s = spec.shape;
  const int head_dim = s.head_dim ? s.head_dim : (s.n_head > 0 ? s.n_embd / s.n_head : 0);
  const int n_rot = s.n_rot ? s.n_rot : head_dim;
  if (s.n_head <= 0 || s.n_head_kv <= 0 || head_dim <= 0 || head_dim % 2 != 0 || s.n_head % s.n_head_kv != 0 ||
      (!s.head_dim && s.n_embd % s.n_head != 0) || s.n_vocab < 260 || n_rot % 2 != 0 || n_rot > head_dim)
    throw Error("synthetic model: inconsistent shape (need an even head size, embd % heads == 0 without --head-dim, "
                "heads % kv_heads == 0, vocab >= 260, an even rope dimension count of at most the head size)");
  const int q_dim = head_dim * s.n_head, kv_dim = head_dim * s.n_head_kv;

  GgufWriter w;
  const std::string arch(s.arch);
  const Architecture& architecture = kiln::architecture(arch, "synthetic model");
  if (spec.rope_freqs && architecture.rope_factors != RopeFactors::Freqs)
    throw Error("synthetic model: RoPE frequency factors are not part of the " + arch + " architecture");
  if (spec.longrope_original_context && architecture.rope_factors != RopeFactors::LongShort)
    throw Error("synthetic model: LongRoPE factors are not part of the " + arch + " architecture");
  const bool moe = std::ranges::find(architecture.block, "ffn_gate_inp.weight") != architecture.block.end();
  if (moe && (s.n_expert <= 0 || s.n_expert_used <= 0 || s.n_expert_used > s.n_expert || s.n_ff_exp <= 0))
    throw Error("synthetic model: the " + arch + " architecture needs --experts, --experts-used (at most the experts) "
                "and --expert-ff");
  if (!moe && (s.n_expert || s.n_expert_used || s.n_ff_exp))
    throw Error("synthetic model: experts are not part of the " + arch + " architecture");
  const bool shared_expert =
      std::ranges::find(architecture.block, "ffn_gate_shexp.weight") != architecture.block.end();
  if (shared_expert && s.n_ff_shexp <= 0)
    throw Error("synthetic model: the " + arch + " architecture needs --shared-expert-ff");
  if (!shared_expert && s.n_ff_shexp)
    throw Error("synthetic model: a shared expert is not part of the " + arch + " architecture");
  // phi3's converter writes the key, which llama.cpp (and kiln) ignore.
  if (s.n_swa && arch != "gemma3" && arch != "phi3" && arch != "gpt-oss")
    throw Error("synthetic model: kiln-synth writes a sliding window for gemma3, phi3 and gpt-oss only");
  if (!s.n_swa && arch == "gpt-oss")
    throw Error("synthetic model: the gpt-oss architecture needs --sliding-window (llama.cpp requires the key)");
  const std::string p = arch + ".";
  w.add_string("general.architecture", arch);
  w.add_string("general.name", "kiln synthetic " + std::string(s.name) + " (random weights)");
  w.add_u32(p + "context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32(p + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32(p + "block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32(p + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32(p + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32(p + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.head_dim) {  // as llama.cpp's converters write a head size that is not n_embd / n_head
    w.add_u32(p + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.add_u32(p + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  w.add_u32(p + "rope.dimension_count", static_cast<uint32_t>(n_rot));
  w.add_f32(p + "rope.freq_base", spec.rope_base);
  w.add_f32(p + "attention.layer_norm_rms_epsilon", spec.rms_eps);
  if (s.n_swa) {
    w.add_u32(p + "attention.sliding_window", static_cast<uint32_t>(s.n_swa));
    if (arch == "gemma3") w.add_u32(p + "attention.sliding_window_pattern", 6);  // llama.cpp's default, written out
  }
  if (spec.longrope_original_context) add_longrope(w, p, n_rot, s.n_ctx, spec.longrope_original_context);
  if (arch == "gpt-oss") add_gpt_oss_yarn(w, p);
  if (s.n_expert) {
    w.add_u32(p + "expert_count", static_cast<uint32_t>(s.n_expert));
    w.add_u32(p + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
    w.add_u32(p + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp));
  }
  if (s.n_ff_shexp) w.add_u32(p + "expert_shared_feed_forward_length", static_cast<uint32_t>(s.n_ff_shexp));
  w.add_u32(p + "vocab_size", static_cast<uint32_t>(s.n_vocab));
  if (spec.vocabulary)
    copy_vocab(w, *spec.vocabulary, s.n_vocab);
  else
    add_vocab(w, s.n_vocab);

  Random rng(spec.seed);
  const float in_embd = 1.0f / std::sqrt(float(s.n_embd));
  // Embedding rows with RMS near 0.5, and an output layer whose logits spread over a few units.
  const bool tied_mix = spec.tied_output && spec.types.more_bits;
  add_matrix(w, rng, "token_embd.weight", tied_mix ? spec.types.output : spec.types.token_embd, s.n_vocab, s.n_embd,
             0.5f);
  add_norm(w, rng, "output_norm.weight", s.n_embd);
  if (!spec.tied_output) add_matrix(w, rng, "output.weight", spec.types.output, s.n_vocab, s.n_embd, 3.0f * in_embd);
  if (spec.rope_freqs) add_rope_freqs(w, n_rot, spec.rope_base);
  // The blocks, tensor by tensor from the architecture's lists. Matrices
  // that read the residual stream start at 1/sqrt(n_embd); those that write
  // back into it (the output projections), at half of 1/sqrt(their input).
  // A fused matrix is its parts' rows drawn as one matrix, in one type.
  const decoder::BlockSizes size{s.n_embd, q_dim, kv_dim, head_dim, s.n_head, s.n_ff, s.n_expert, s.n_ff_exp,
                                       s.n_ff_shexp};
  auto add_block_matrix = [&](const std::string& name, bool more, std::span<const std::string_view> matrices) {
    const std::vector<int64_t> dims = decoder::stacked_dims(matrices, size);
    const int cols = int(dims[0]);
    const bool reads_residual = decoder::block_tensor(matrices.front()).cols == decoder::Dim::Embd;
    const float scale = reads_residual ? in_embd : 0.5f * (1.0f / std::sqrt(float(cols)));
    const int stack = int(size(decoder::block_tensor(matrices.front()).stack));
    add_matrix(w, rng, name, matrix_type(spec.types, more, matrices), int(dims[1]), cols, scale, stack);
  };
  for (int l = 0; l < s.n_layer; ++l) {
    const bool more = spec.types.more_bits && gets_more_bits(l, s.n_layer);
    for (const std::string_view tensor : architecture.block) {
      const decoder::BlockTensor& t = decoder::block_tensor(tensor);
      const std::string name = decoder::block_tensor_name(l, tensor);
      if (t.vector) {
        const bool bias = t.name.ends_with(".bias");
        add_vector(w, rng, name, decoder::tensor_dims(t, size), bias ? 0.0f : 1.0f, bias ? 0.5f : 0.1f);
      } else {
        add_block_matrix(name, more, std::span<const std::string_view>(&tensor, 1));
      }
    }
    for (const std::string_view tensor : architecture.fused)
      add_block_matrix(decoder::block_tensor_name(l, tensor), more, decoder::fused_tensor(tensor).parts);
  }
  return w;
}

}  // namespace kiln::synth
