// The weight matrices as the matmul reads them. Float and K-quant matrices
// are used in place, in the mapped GGUF file; Q8_0 and Q4_0 matrices are
// rearranged once at load time into the interleaved layout of
// kernels/interleave.hpp, and the file's pages they came from are handed
// back to the kernel, so the resident memory stays one copy of the weights.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/gguf.hpp"

namespace kiln {

class MatmulWeights {
 public:
  // What the matmul reads for `tensor` (rows = dims[1], cols = dims[0]):
  // its bytes in the file, or an interleaved copy made now, owned by this
  // object. Call outside any parallel region (it opens its own).
  const void* prepare(const GgufTensor& tensor);

  // Bytes held in interleaved copies.
  int64_t copied_bytes() const { return copied_bytes_; }

 private:
  struct FreeAligned {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, FreeAligned>> copies_;
  int64_t copied_bytes_ = 0;
};

}  // namespace kiln
