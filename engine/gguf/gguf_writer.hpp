// Writing GGUF v3 files: used by kiln-synth to make synthetic models and by
// the tests to make well-formed and deliberately broken files.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"

namespace kiln {

// An array holding `items`, encoded (GgufArray owns the bytes). Throws
// kiln::Error if an item's type is not `elem_type` or its value does not fit it.
GgufArray gguf_array(GgufValueType elem_type, std::span<const GgufValue> items);

class GgufWriter {
 public:
  // `alignment` must be a power of two; when it is not GGUF's default the
  // file gets a `general.alignment` key (which add() therefore refuses).
  explicit GgufWriter(uint64_t alignment = kGgufDefaultAlignment);

  // Throws kiln::Error for a duplicate key or a value that does not match
  // its type (including array items whose type differs from elem_type).
  void add(const std::string& key, const GgufValue& value);
  void add_string(const std::string& key, std::string v);
  void add_u32(const std::string& key, uint32_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string_array(const std::string& key, std::vector<std::string> v);
  void add_f32_array(const std::string& key, const std::vector<float>& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);

  // `data` holds the tensor in its GGUF layout (already quantized); its size
  // must equal what type and dims imply. dims are ne0 first.
  void add_tensor(const std::string& name, TensorType type, std::vector<int64_t> dims,
                  std::vector<uint8_t> data);

  // The complete file image.
  std::vector<uint8_t> bytes() const;
  // Writes the image atomically: temporary file in the same folder, fsync, rename.
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
  };
  uint64_t alignment_;
  std::vector<uint8_t> metadata_;  // the encoded key/value pairs, in the order added
  std::set<std::string> keys_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace kiln
