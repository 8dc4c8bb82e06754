#include "models/decoder/read_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/rope.hpp"
#include "models/decoder/block_tensors.hpp"

namespace kiln {

namespace {

struct TensorRule {
  std::string name;
  std::vector<int64_t> dims;
  bool float_only;  // norms and biases are read as plain float arrays
};

// The tensors of block `l` (models/decoder/block_tensors.hpp): the
// architecture's plain ones, then its fused ones, or a fused tensor's parts
// where the file holds those instead (FusedTensor::or_separate).
std::vector<TensorRule> block_rules(const GgufFile& f, const Hyperparams& hp, const Architecture& arch, int l) {
  const decoder::BlockSizes size = decoder::block_sizes(hp);
  std::vector<TensorRule> rules;
  auto add = [&](std::string_view name) {
    const decoder::BlockTensor& t = decoder::block_tensor(name);
    rules.push_back({decoder::block_tensor_name(l, name), decoder::tensor_dims(t, size), t.vector != nullptr});
  };
  for (const std::string_view name : arch.block) add(name);
  for (const std::string_view name : arch.fused) {
    const decoder::FusedTensor& fused = decoder::fused_tensor(name);
    const std::string fused_name = decoder::block_tensor_name(l, name);
    if (fused.or_separate && !f.find_tensor(fused_name) &&
        f.find_tensor(decoder::block_tensor_name(l, fused.parts.front()))) {
      for (const std::string_view part : fused.parts) add(part);
    } else {
      rules.push_back({fused_name, decoder::stacked_dims(fused.parts, size), false});
    }
  }
  return rules;
}

std::vector<TensorRule> tensor_rules(const GgufFile& f, const Hyperparams& hp, const Architecture& arch) {
  const int64_t e = hp.n_embd;
  std::vector<TensorRule> rules = {{"token_embd.weight", {e, hp.n_vocab}, false},
                                   {"output_norm.weight", {e}, true}};
  if (!hp.tied_output) rules.push_back({"output.weight", {e, hp.n_vocab}, false});
  if (hp.rope_freqs) rules.push_back({"rope_freqs.weight", {hp.n_rot / 2}, true});
  if (hp.longrope)
    for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"})
      rules.push_back({name, {hp.n_rot / 2}, true});
  for (int l = 0; l < hp.n_layer; ++l) {
    const std::vector<TensorRule> block = block_rules(f, hp, arch, l);
    rules.insert(rules.end(), block.begin(), block.end());
  }
  return rules;
}

// Shapes compared as llama.cpp's loader compares them: trailing dimensions
// of 1 do not count (they change no byte's place), so Qwen2-MoE's shared
// expert gate may be [n_embd, 1], as its converter writes it, or [n_embd].
bool same_shape(std::vector<int64_t> a, std::vector<int64_t> b) {
  while (a.size() > 1 && a.back() == 1) a.pop_back();
  while (b.size() > 1 && b.back() == 1) b.pop_back();
  return a == b;
}

int positive_int(const GgufFile& f, const std::string& key, uint64_t value) {
  if (value == 0 || value > (1u << 30))
    throw Error(f.path() + ": key '" + key + "' has implausible value " + std::to_string(value));
  return static_cast<int>(value);
}

// RoPE scaling from the rope.scaling.* keys: "linear" stretches positions,
// "yarn" stretches them by a ramp over the pairs and scales the rotation
// (with llama.cpp's default betas, 32 and 1, where the file has none);
// Llama 3's frequency factors come as the rope_freqs.weight tensor instead.
void read_rope_scaling(const GgufFile& f, const std::string& p, Hyperparams& hp) {
  const std::string type = f.get_string_or(p + "rope.scaling.type", "none");
  if (type == "none") return;
  if (type != "linear" && type != "yarn")
    throw Error(f.path() + ": RoPE scaling '" + type + "' is not supported (kiln supports none, linear and yarn)");
  const double factor = f.get_float_or(p + "rope.scaling.factor", 1.0);
  if (!(factor >= 1.0)) throw Error(f.path() + ": rope.scaling.factor must be at least 1");
  hp.rope_freq_scale = static_cast<float>(1.0 / factor);
  if (type == "yarn") {
    hp.rope_yarn = true;
    hp.n_ctx_orig = count_key(f, p + "rope.scaling.original_context_length", static_cast<uint64_t>(hp.n_ctx_train));
    hp.rope_yarn_beta_fast = static_cast<float>(f.get_float_or(p + "rope.scaling.yarn_beta_fast", 32.0));
    hp.rope_yarn_beta_slow = static_cast<float>(f.get_float_or(p + "rope.scaling.yarn_beta_slow", 1.0));
    if (!(hp.rope_yarn_beta_fast > hp.rope_yarn_beta_slow && hp.rope_yarn_beta_slow > 0.0f))
      throw Error(f.path() + ": YaRN's yarn_beta_fast must exceed yarn_beta_slow, and both be positive");
  }
}

}  // namespace

int count_key(const GgufFile& f, const std::string& key, uint64_t fallback) {
  return positive_int(f, key, f.get_uint_or(key, fallback));
}

ModelDesc read_decoder(const GgufFile& f, const Architecture& arch) {
  const std::string p = std::string(arch.name) + ".";
  auto required = [&](const std::string& key) { return positive_int(f, p + key, f.get_uint(p + key)); };
  auto optional = [&](const std::string& key, uint64_t fallback) {
    return positive_int(f, p + key, f.get_uint_or(p + key, fallback));
  };
  auto fail = [&](const std::string& what) { throw Error(f.path() + ": " + what); };

  ModelDesc d;
  d.arch = arch.name;
  Hyperparams& hp = d.hp;
  hp.n_embd = required("embedding_length");
  hp.n_layer = required("block_count");
  hp.n_ff = required("feed_forward_length");
  hp.n_head = required("attention.head_count");
  hp.n_head_kv = optional("attention.head_count_kv", hp.n_head);
  hp.n_ctx_train = required("context_length");
  if (hp.n_head % hp.n_head_kv != 0)
    fail("head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " + std::to_string(hp.n_head_kv));
  // The head size: attention.key_length where the file gives it (Qwen3's and
  // Gemma's are not n_embd / n_head), else n_embd / n_head.
  if (!f.find(p + "attention.key_length") && hp.n_embd % hp.n_head != 0)
    fail("embedding_length " + std::to_string(hp.n_embd) + " is not a multiple of head_count " + std::to_string(hp.n_head) +
         " and there is no attention.key_length");
  hp.head_dim = optional("attention.key_length", hp.n_embd / hp.n_head);
  if (f.get_uint_or(p + "attention.value_length", hp.head_dim) != uint64_t(hp.head_dim))
    fail("attention.value_length differs from key_length, which kiln does not support");
  hp.n_rot = optional("rope.dimension_count", hp.head_dim);
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    fail("rope.dimension_count " + std::to_string(hp.n_rot) + " must be even and at most the head size " +
         std::to_string(hp.head_dim));
  hp.rope_base = static_cast<float>(f.get_float_or(p + "rope.freq_base", 10000.0));  // llama.cpp's default
  read_rope_scaling(f, p, hp);
  hp.rms_eps = static_cast<float>(f.get_float_or(p + "attention.layer_norm_rms_epsilon", -1.0));
  if (!(hp.rms_eps > 0.0f)) fail("key '" + p + "attention.layer_norm_rms_epsilon' is missing or not positive");
  // A mixture of experts, in llama.cpp's keys: an architecture whose blocks
  // hold a router (ffn_gate_inp) needs them, any other refuses them.
  if (std::ranges::find(arch.block, "ffn_gate_inp.weight") != arch.block.end()) {
    hp.n_expert = required("expert_count");
    hp.n_expert_used = required("expert_used_count");
    if (hp.n_expert_used > hp.n_expert)
      fail("expert_used_count " + std::to_string(hp.n_expert_used) + " is more than expert_count " +
           std::to_string(hp.n_expert));
    hp.n_ff_exp = optional("expert_feed_forward_length", hp.n_ff / hp.n_expert_used);  // llama.cpp's default
    // Qwen3-MoE's converter writes no such key, and its weights are normalized.
    hp.expert_weights_norm = f.get_bool_or(p + "expert_weights_norm", true);
  } else if (f.get_uint_or(p + "expert_count", 0) > 0) {
    fail("mixture-of-experts models of the " + d.arch + " architecture are not supported");
  }
  if (std::ranges::find(arch.block, "ffn_gate_shexp.weight") != arch.block.end())
    hp.n_ff_shexp = optional("expert_shared_feed_forward_length", hp.n_ff);  // llama.cpp's default
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  hp.rope_freqs = f.find_tensor("rope_freqs.weight") != nullptr;
  if (hp.rope_freqs && arch.rope_factors != RopeFactors::Freqs)
    fail("tensor 'rope_freqs.weight' is not part of the " + d.arch + " architecture");
  // LongRoPE: either factor tensor makes both required (tensor_rules), as
  // llama.cpp's converter always writes the two.
  hp.longrope = f.find_tensor("rope_factors_long.weight") || f.find_tensor("rope_factors_short.weight");
  if (hp.longrope && arch.rope_factors != RopeFactors::LongShort)
    fail("LongRoPE factors (rope_factors_long.weight, rope_factors_short.weight) are not part of the " + d.arch +
         " architecture");
  if (hp.longrope) hp.n_ctx_orig = optional("rope.scaling.original_context_length", hp.n_ctx_train);
  // Every architecture's graph in llama.cpp hands it to each rotation.
  hp.rope_attn_factor = static_cast<float>(f.get_float_or(p + "rope.scaling.attn_factor", 1.0));
  if (!(hp.rope_attn_factor > 0.0f && std::isfinite(hp.rope_attn_factor)))
    fail("key '" + p + "rope.scaling.attn_factor' must be positive");
  if (hp.rope_yarn) hp.rope_attn_factor = kernels::rope_yarn_mscale(hp.rope_freq_scale, hp.rope_attn_factor);

  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (!embd || embd->dims.size() != 2) fail("tensor 'token_embd.weight' is missing or not 2-D");
  hp.n_vocab = optional("vocab_size", uint64_t(embd->dims[1]));
  hp.tied_output = f.find_tensor("output.weight") == nullptr;

  // The file's tensors bound block_count before a rule is made for each block.
  const size_t per_block = arch.block.size() + arch.fused.size();
  if (size_t(hp.n_layer) > f.tensors().size() / per_block)
    fail("block_count " + std::to_string(hp.n_layer) + " needs at least " + std::to_string(per_block) +
         " tensors per block, the file has " + std::to_string(f.tensors().size()) + " tensors in all");
  d.layers.assign(size_t(hp.n_layer), LayerKind{});

  std::set<std::string> used;
  for (const auto& rule : tensor_rules(f, hp, arch)) {
    const GgufTensor* t = f.find_tensor(rule.name);
    if (!t) fail("tensor '" + rule.name + "' is missing");
    if (!same_shape(t->dims, rule.dims))
      fail("tensor '" + rule.name + "' has shape " + dims_text(t->dims) + ", the hyperparameters imply " +
           dims_text(rule.dims));
    if (rule.float_only && t->type != TensorType::F32)
      fail("tensor '" + rule.name + "' has type " + std::string(traits_of(t->type).name) + ", kiln expects f32 here");
    d.tensors.push_back({rule.name, t->type, t->dims});
    used.insert(rule.name);
  }
  for (const auto& t : f.tensors()) {
    if (used.count(t.name)) continue;
    if (t.name.find("_shexp") != std::string::npos)
      fail("tensor '" + t.name + "' is a shared expert, which the " + d.arch +
           " architecture does not have (qwen2moe's blocks do)");
    fail("tensor '" + t.name + "' is not part of the " + d.arch + " architecture as kiln implements it");
  }
  return d;
}

}  // namespace kiln
