// Where a compiled model's weights come from. bind_weights
// (models/decoder/bind_weights.hpp) asks a source for each weight by name, in
// one fixed order, in the form the forward pass reads it (WeightForm):
//
//   GgufWeights      a mapped GGUF: raw bytes and F32 vectors from the file,
//                    matrices through LoadedWeights (interleaved copies where
//                    the kernels want them);
//   WeightPacker     the same, at build time, appending each weight to a
//                    weight image instead of keeping it;
//   ImageWeights     that image, built into the program: pointers into it.
//
// Because the packer calls LoadedWeights as loading does, the built-in
// matrices have exactly the layout a GGUF-backed load makes.
//
// A matrix may be some rows of a tensor (a part of a fused one,
// models/decoder/block_tensors.hpp): it is then a matrix of its own in every
// form, a view into the file or an interleaved copy of just those rows, and
// an entry of its own in the image.
#pragma once

#include <optional>
#include <string>

#include "engine/gguf/gguf.hpp"
#include "models/loaded_weights.hpp"
#include "models/weight_image.hpp"

namespace kiln {

// A matrix's name in the weight image: the tensor's, and the rows it takes
// of it if not all.
std::string matrix_entry_name(const std::string& tensor, std::optional<RowRange> rows);

class GgufWeights {
 public:
  explicit GgufWeights(const GgufFile& file) : file_(file) {}
  const void* raw(const std::string& name) { return tensor(name).data; }
  const float* vector(const std::string& name) { return copies_.vector(tensor(name)); }
  const void* matrix(const std::string& name, std::optional<RowRange> rows = {});

 private:
  const GgufTensor& tensor(const std::string& name) const;

  const GgufFile& file_;
  LoadedWeights copies_;
};

class WeightPacker {
 public:
  WeightPacker(const GgufFile& file, WeightImageWriter& out) : file_(file), out_(out) {}
  // Each returns null: the packer keeps nothing.
  const void* raw(const std::string& name);
  const float* vector(const std::string& name);
  const void* matrix(const std::string& name, std::optional<RowRange> rows = {});

 private:
  const GgufFile& file_;
  WeightImageWriter& out_;
};

class ImageWeights {
 public:
  explicit ImageWeights(WeightImage& image) : image_(image) {}
  const void* raw(const std::string& name) { return image_.next(WeightForm::Raw, name); }
  const float* vector(const std::string& name) {
    return reinterpret_cast<const float*>(image_.next(WeightForm::Vector, name));
  }
  const void* matrix(const std::string& name, std::optional<RowRange> rows = {}) {
    return image_.next(WeightForm::Matrix, matrix_entry_name(name, rows));
  }

 private:
  WeightImage& image_;
};

}  // namespace kiln
