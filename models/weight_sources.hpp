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
#pragma once

#include <string>

#include "engine/gguf/gguf.hpp"
#include "models/loaded_weights.hpp"
#include "models/weight_image.hpp"

namespace kiln {

class GgufWeights {
 public:
  explicit GgufWeights(const GgufFile& file) : file_(file) {}
  const void* raw(const std::string& name) { return tensor(name).data; }
  const float* vector(const std::string& name) { return copies_.vector(tensor(name)); }
  const void* matrix(const std::string& name) { return copies_.matrix(tensor(name)).data(); }

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
  const void* matrix(const std::string& name);

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
  const void* matrix(const std::string& name) { return image_.next(WeightForm::Matrix, name); }

 private:
  WeightImage& image_;
};

}  // namespace kiln
