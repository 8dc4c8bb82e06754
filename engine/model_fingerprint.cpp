#include "engine/model_fingerprint.hpp"

#include <algorithm>
#include <span>

#include "engine/error.hpp"
#include "engine/fnv1a.hpp"

namespace kiln {

uint64_t model_fingerprint(const ModelDesc& desc, const GgufFile& file) {
  constexpr size_t kSampleBytes = 64;
  uint64_t h = desc.fingerprint();
  for (const TensorDesc& t : desc.tensors) {
    const GgufTensor* tensor = file.find_tensor(t.name);
    if (tensor == nullptr) throw Error(file.path() + ": tensor '" + t.name + "' is missing");
    const std::span<const uint8_t> bytes(tensor->data, tensor->nbytes);
    const size_t n = std::min(bytes.size(), kSampleBytes);
    h = fnv1a(h, bytes.first(n));
    h = fnv1a(h, bytes.subspan((bytes.size() - n) / 2, n));
    h = fnv1a(h, bytes.last(n));
  }
  return h;
}

}  // namespace kiln
