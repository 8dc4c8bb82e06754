#include "engine/model_desc.hpp"

#include <sstream>

#include "engine/error.hpp"
#include "engine/files/fnv1a.hpp"

namespace kiln {

const TensorDesc& ModelDesc::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  throw Error("model has no tensor '" + name + "'");
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

// Every hyperparameter with its GGUF-style name, for hashing and for messages.
std::vector<std::pair<std::string, std::string>> hparam_fields(const Hyperparams& hp) {
  auto f = [](float v) {
    std::ostringstream o;
    o.precision(9);
    o << v;
    return o.str();
  };
  return {{"vocab size", std::to_string(hp.n_vocab)},
          {"embedding_length", std::to_string(hp.n_embd)},
          {"block_count", std::to_string(hp.n_layer)},
          {"attention.head_count", std::to_string(hp.n_head)},
          {"attention.head_count_kv", std::to_string(hp.n_head_kv)},
          {"head dim", std::to_string(hp.head_dim)},
          {"feed_forward_length", std::to_string(hp.n_ff)},
          {"rope.dimension_count", std::to_string(hp.n_rot)},
          {"context_length", std::to_string(hp.n_ctx_train)},
          {"rope.freq_base", f(hp.rope_base)},
          {"RoPE frequency scale", f(hp.rope_freq_scale)},
          {"attention.layer_norm_rms_epsilon", f(hp.rms_eps)},
          {"tied output", hp.tied_output ? "yes" : "no"},
          {"NEOX RoPE", hp.rope_neox ? "yes" : "no"},
          {"Q/K/V biases", hp.qkv_bias ? "yes" : "no"},
          {"RoPE frequency factors", hp.rope_freqs ? "yes" : "no"}};
}

}  // namespace

uint64_t ModelDesc::fingerprint() const {
  std::string text = arch + "\n";
  for (const auto& [k, v] : hparam_fields(hp)) text += k + "=" + v + "\n";
  for (const auto& t : tensors)
    text += t.name + " " + std::string(traits_of(t.type).name) + " " + dims_text(t.dims) + "\n";
  return fnv1a(kFnv1aStart, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

std::optional<std::string> describe_mismatch(const ModelDesc& compiled, const ModelDesc& file) {
  if (compiled.arch != file.arch)
    return "architecture is '" + file.arch + "', this binary was compiled for '" + compiled.arch + "'";
  const auto want = hparam_fields(compiled.hp), got = hparam_fields(file.hp);
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i].second != got[i].second)
      return want[i].first + " is " + got[i].second + ", this binary was compiled for " + want[i].second;
  if (compiled.tensors.size() != file.tensors.size())
    return "file has " + std::to_string(file.tensors.size()) + " model tensors, this binary expects " +
           std::to_string(compiled.tensors.size());
  for (size_t i = 0; i < compiled.tensors.size(); ++i) {
    const auto &a = compiled.tensors[i], &b = file.tensors[i];
    if (a.name != b.name) return "tensor " + std::to_string(i) + " is '" + b.name + "', expected '" + a.name + "'";
    if (a.type != b.type)
      return "tensor '" + a.name + "' has type " + std::string(traits_of(b.type).name) +
             ", this binary was compiled for " + std::string(traits_of(a.type).name);
    if (a.dims != b.dims)
      return "tensor '" + a.name + "' has shape " + dims_text(b.dims) + ", this binary was compiled for " +
             dims_text(a.dims);
  }
  return std::nullopt;
}

}  // namespace kiln
