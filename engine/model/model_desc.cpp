#include "engine/model/model_desc.hpp"

#include <algorithm>
#include <sstream>

#include "engine/error/error.hpp"
#include "engine/files/content_hash.hpp"

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

std::string value_text(int v) { return std::to_string(v); }
std::string value_text(bool v) { return v ? "yes" : "no"; }
std::string value_text(float v) {
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

std::string layer_kind_text(const LayerKind& k) {
  return std::string(k.sliding ? "sliding" : "global") + (k.rope ? "" : " NoPE");
}

// Every hyperparameter with its label, then each layer's kind, as text: for
// hashing and for messages.
std::vector<std::pair<std::string, std::string>> described_fields(const ModelDesc& d) {
  std::vector<std::pair<std::string, std::string>> fields;
  visit_hparams(d.hp, [&](const char*, const char* label, const auto& v) { fields.emplace_back(label, value_text(v)); });
  for (size_t l = 0; l < d.layers.size(); ++l)
    fields.emplace_back("layer " + std::to_string(l), layer_kind_text(d.layers[l]));
  return fields;
}

}  // namespace

uint64_t ModelDesc::fingerprint() const {
  std::string text = arch + "\n";
  for (const auto& [k, v] : described_fields(*this)) text += k + "=" + v + "\n";
  for (const auto& t : tensors)
    text += t.name + " " + std::string(traits_of(t.type).name) + " " + dims_text(t.dims) + "\n";
  return content_hash({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

std::optional<std::string> describe_mismatch(const ModelDesc& compiled, const ModelDesc& file) {
  if (compiled.arch != file.arch)
    return "architecture is '" + file.arch + "', this binary was compiled for '" + compiled.arch + "'";
  const auto want = described_fields(compiled), got = described_fields(file);
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i)
    if (want[i].second != got[i].second)
      return want[i].first + " is " + got[i].second + ", this binary was compiled for " + want[i].second;
  if (want.size() != got.size())
    return "file describes " + std::to_string(file.layers.size()) + " layers, this binary was compiled for " +
           std::to_string(compiled.layers.size());
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
