// The `llama` architecture as GGUF describes it (Llama 1/2, TinyLlama,
// Mistral-style GQA, the llama2.c stories models): which keys hold the
// hyperparameters, their defaults, and the tensors with their shapes.
#include <set>

#include "models/describe.hpp"

namespace kiln {

namespace {

struct TensorRule {
  std::string name;
  std::vector<int64_t> dims;
  bool float_only;  // norms are read as plain float arrays
};

std::vector<TensorRule> llama_tensors(const Hyperparams& hp) {
  const int64_t e = hp.n_embd, q = int64_t(hp.n_head) * hp.head_dim, kv = int64_t(hp.n_head_kv) * hp.head_dim;
  std::vector<TensorRule> rules = {{"token_embd.weight", {e, hp.n_vocab}, false},
                                   {"output_norm.weight", {e}, true}};
  if (!hp.tied_output) rules.push_back({"output.weight", {e, hp.n_vocab}, false});
  for (int l = 0; l < hp.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    rules.push_back({b + "attn_norm.weight", {e}, true});
    rules.push_back({b + "attn_q.weight", {e, q}, false});
    rules.push_back({b + "attn_k.weight", {e, kv}, false});
    rules.push_back({b + "attn_v.weight", {e, kv}, false});
    rules.push_back({b + "attn_output.weight", {q, e}, false});
    rules.push_back({b + "ffn_norm.weight", {e}, true});
    rules.push_back({b + "ffn_gate.weight", {e, hp.n_ff}, false});
    rules.push_back({b + "ffn_up.weight", {e, hp.n_ff}, false});
    rules.push_back({b + "ffn_down.weight", {hp.n_ff, e}, false});
  }
  return rules;
}

int positive_int(const GgufFile& f, const std::string& key, uint64_t value) {
  if (value == 0 || value > (1u << 30)) throw Error(f.path() + ": key '" + key + "' has implausible value " + std::to_string(value));
  return static_cast<int>(value);
}

}  // namespace

ModelDesc describe_llama(const GgufFile& f) {
  const std::string p = "llama.";
  auto required = [&](const std::string& key) { return positive_int(f, p + key, f.get_uint(p + key)); };

  ModelDesc d;
  d.arch = "llama";
  Hyperparams& hp = d.hp;
  hp.n_embd = required("embedding_length");
  hp.n_layer = required("block_count");
  hp.n_ff = required("feed_forward_length");
  hp.n_head = required("attention.head_count");
  hp.n_head_kv = positive_int(f, p + "attention.head_count_kv", f.get_uint_or(p + "attention.head_count_kv", hp.n_head));
  hp.n_ctx_train = required("context_length");
  if (hp.n_embd % hp.n_head != 0)
    throw Error(f.path() + ": embedding_length " + std::to_string(hp.n_embd) + " is not a multiple of head_count " +
                std::to_string(hp.n_head));
  if (hp.n_head % hp.n_head_kv != 0)
    throw Error(f.path() + ": head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
                std::to_string(hp.n_head_kv));
  hp.head_dim = positive_int(f, p + "attention.key_length", f.get_uint_or(p + "attention.key_length", hp.n_embd / hp.n_head));
  if (f.get_uint_or(p + "attention.value_length", hp.head_dim) != uint64_t(hp.head_dim))
    throw Error(f.path() + ": attention.value_length differs from key_length, which kiln does not support");
  hp.n_rot = positive_int(f, p + "rope.dimension_count", f.get_uint_or(p + "rope.dimension_count", hp.head_dim));
  if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    throw Error(f.path() + ": rope.dimension_count " + std::to_string(hp.n_rot) + " must be even and at most the head size " +
                std::to_string(hp.head_dim));
  hp.rope_base = static_cast<float>(f.get_float_or(p + "rope.freq_base", 10000.0));  // llama.cpp's default
  hp.rms_eps = static_cast<float>(f.get_float_or(p + "attention.layer_norm_rms_epsilon", -1.0));
  if (!(hp.rms_eps > 0.0f)) throw Error(f.path() + ": key 'llama.attention.layer_norm_rms_epsilon' is missing or not positive");
  const std::string scaling = f.get_string_or(p + "rope.scaling.type", "none");
  if (scaling != "none") throw Error(f.path() + ": RoPE scaling '" + scaling + "' is not supported yet");
  if (f.get_uint_or(p + "expert_count", 0) > 0) throw Error(f.path() + ": mixture-of-experts llama models are not supported");

  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (!embd || embd->dims.size() != 2) throw Error(f.path() + ": tensor 'token_embd.weight' is missing or not 2-D");
  hp.n_vocab = positive_int(f, p + "vocab_size", f.get_uint_or(p + "vocab_size", uint64_t(embd->dims[1])));
  hp.tied_output = f.find_tensor("output.weight") == nullptr;

  std::set<std::string> used;
  for (const auto& rule : llama_tensors(hp)) {
    const GgufTensor* t = f.find_tensor(rule.name);
    if (!t) throw Error(f.path() + ": tensor '" + rule.name + "' is missing");
    if (t->dims != rule.dims)
      throw Error(f.path() + ": tensor '" + rule.name + "' has shape " + dims_text(t->dims) + ", the hyperparameters imply " +
                  dims_text(rule.dims));
    if (rule.float_only && t->type != TensorType::F32)
      throw Error(f.path() + ": tensor '" + rule.name + "' has type " + std::string(traits_of(t->type).name) +
                  ", kiln expects f32 for norm weights");
    d.tensors.push_back({rule.name, t->type, t->dims});
    used.insert(rule.name);
  }
  for (const auto& t : f.tensors())
    if (!used.count(t.name))
      throw Error(f.path() + ": tensor '" + t.name + "' is not part of the llama architecture as kiln implements it");
  return d;
}

}  // namespace kiln
