// The weights as the forward pass reads them. Float matrices are used in
// place, in the mapped GGUF file. Quantized matrices (Q8_0, Q4_0, K-quants)
// are rearranged once at load time into the interleaved layout of
// kernels/interleave.hpp, and the file's pages they came from are handed
// back to the kernel, so the resident memory stays one copy of the weights.
//
// Vectors (norm weights, biases) are copied out of the file too: on recent
// kernels, reading a few bytes of a mapping maps the whole large folio
// around them, several MB that would include the released pages of the
// matrices next to them. So copy every vector first, then the matrices.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/gguf/gguf.hpp"

namespace kiln {

class LoadedWeights {
 public:
  // A copy of an F32 vector (or of any small tensor read as floats).
  const float* vector(const GgufTensor& tensor);

  // What the matmul reads for `tensor` (rows = dims[1], cols = dims[0]):
  // its bytes in the file, or an interleaved copy made now on a team of
  // LoadThreads::current() threads. Call outside any parallel region. The one definition of that layout:
  // weights built into a program are packed by this same call at build time
  // (models/weight_sources.hpp).
  std::span<const uint8_t> matrix(const GgufTensor& tensor);

 private:
  struct FreeAligned {
    void operator()(void* p) const;
  };
  void* allocate(int64_t bytes);

  std::vector<std::unique_ptr<void, FreeAligned>> copies_;
};

}  // namespace kiln
