#include "engine/model/model_fingerprint.hpp"

#include "engine/files/content_hash.hpp"
#include "engine/error/error.hpp"

namespace kiln {

uint64_t file_content_hash(const GgufFile& file) {
  std::optional<uint64_t> bytes_hash = file.identity() ? cached_content_hash(*file.identity()) : std::nullopt;
  if (!bytes_hash) {
    bytes_hash = file.hash_contents();
    if (file.identity()) store_content_hash(*file.identity(), *bytes_hash);
  }
  return *bytes_hash;
}

uint64_t model_fingerprint(const ModelDesc& desc, uint64_t file_hash) {
  const uint64_t both[2] = {file_hash, desc.fingerprint()};
  return content_hash({reinterpret_cast<const uint8_t*>(both), sizeof both});
}

uint64_t model_fingerprint(const ModelDesc& desc, const GgufFile& file) {
  for (const TensorDesc& t : desc.tensors)
    if (file.find_tensor(t.name) == nullptr) throw Error(file.path() + ": tensor '" + t.name + "' is missing");
  return model_fingerprint(desc, file_content_hash(file));
}

}  // namespace kiln
