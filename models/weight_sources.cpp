#include "models/weight_sources.hpp"

namespace kiln {

namespace {

const GgufTensor& find(const GgufFile& file, const std::string& name) {
  const GgufTensor* t = file.find_tensor(name);
  if (t == nullptr) throw Error(file.path() + ": tensor '" + name + "' is missing");
  return *t;
}

}  // namespace

const GgufTensor& GgufWeights::tensor(const std::string& name) const { return find(file_, name); }

const void* WeightPacker::raw(const std::string& name) {
  const GgufTensor& t = find(file_, name);
  out_.add(WeightForm::Raw, name, {t.data, t.nbytes});
  return nullptr;
}

// A LoadedWeights per weight: its copy is written out and freed at once, so
// packing holds one matrix in memory, not the model.
const float* WeightPacker::vector(const std::string& name) {
  const GgufTensor& t = find(file_, name);
  LoadedWeights loaded;
  out_.add(WeightForm::Vector, name, {reinterpret_cast<const uint8_t*>(loaded.vector(t)), t.nbytes});
  return nullptr;
}

const void* WeightPacker::matrix(const std::string& name) {
  LoadedWeights loaded;
  out_.add(WeightForm::Matrix, name, loaded.matrix(find(file_, name)));
  return nullptr;
}

}  // namespace kiln
