#include "models/weight_sources.hpp"

namespace kiln {

namespace {

const GgufTensor& find(const GgufFile& file, const std::string& name) {
  const GgufTensor* t = file.find_tensor(name);
  if (t == nullptr) throw Error(file.path() + ": tensor '" + name + "' is missing");
  return *t;
}

GgufTensor matrix_tensor(const GgufTensor& t, std::optional<RowRange> rows) { return rows ? t.rows(*rows) : t; }

}  // namespace

std::string matrix_entry_name(const std::string& tensor, std::optional<RowRange> rows) {
  if (!rows) return tensor;
  return tensor + " rows " + std::to_string(rows->first) + " to " + std::to_string(rows->first + rows->count - 1);
}

const GgufTensor& GgufWeights::tensor(const std::string& name) const { return find(file_, name); }

const void* GgufWeights::matrix(const std::string& name, std::optional<RowRange> rows) {
  return copies_.matrix(matrix_tensor(tensor(name), rows)).data();
}

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

const void* WeightPacker::matrix(const std::string& name, std::optional<RowRange> rows) {
  LoadedWeights loaded;
  out_.add(WeightForm::Matrix, matrix_entry_name(name, rows), loaded.matrix(matrix_tensor(find(file_, name), rows)));
  return nullptr;
}

}  // namespace kiln
