// Reading GGUF files (versions 2 and 3): metadata, tensor directory, and the
// mmapped data section. Everything read is validated; a bad file throws
// kiln::Error with one line naming the problem and where it is (byte offset,
// key or tensor name).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/files/file_cache.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln {

inline constexpr char kGgufMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint64_t kGgufDefaultAlignment = 32;  // when `general.alignment` is absent
inline constexpr size_t kMaxTensorDims = 4;

// Rounds `offset` up to a multiple of `alignment` (a power of two).
constexpr uint64_t gguf_align(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) & ~(alignment - 1);
}

// GGUF metadata value type ids.
enum class GgufValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

struct GgufValue;

// An array as GGUF encodes it: `count` elements of `elem_type` back to back
// in `encoded` (a string as its length and bytes, a nested array as its own
// element type, count and elements). Reading a file checks the encoding and
// keeps only this view of the file's bytes: an array costs no memory beyond
// the file's, where a GgufValue per element would cost about 48 times its
// size. An array built in memory (gguf_array(), engine/gguf/gguf_writer.hpp) owns
// its bytes through `storage`; a view into a file is valid while the
// GgufFile lives.
struct GgufArray {
  GgufValueType elem_type = GgufValueType::UINT8;
  uint64_t count = 0;
  std::span<const uint8_t> encoded;
  std::shared_ptr<const std::vector<uint8_t>> storage;  // null for a view into a file

  // Decodes the elements one at a time, in order. Throws kiln::Error if the
  // bytes do not hold exactly `count` elements of `elem_type` (only possible
  // for an array put together by hand).
  void for_each(const std::function<void(const GgufValue&)>& visit) const;
  // for_each for an array of strings (elem_type STRING), each viewed in
  // place: no GgufValue or copy per element (a vocabulary has 32,000 or more).
  void for_each_string(const std::function<void(std::string_view)>& visit) const;
  // Equal element type, count and encoding.
  bool operator==(const GgufArray& other) const;
};

// One metadata value. Integers keep their exact GGUF type in `type`.
struct GgufValue {
  GgufValueType type;
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> value;

  // The value as integer type Int, or nullopt when it is not an integer or
  // does not fit in Int.
  template <typename Int>
  std::optional<Int> as_integer() const {
    if (const auto* u = std::get_if<uint64_t>(&value))
      if (std::in_range<Int>(*u)) return static_cast<Int>(*u);
    if (const auto* i = std::get_if<int64_t>(&value))
      if (std::in_range<Int>(*i)) return static_cast<Int>(*i);
    return std::nullopt;
  }

  bool operator==(const GgufValue&) const = default;
};

// Name of a value type as used in error messages, e.g. "uint32".
std::string_view gguf_type_name(GgufValueType type);

// Rows [first, first + count) of a matrix (its rows: dims[1]).
struct RowRange {
  int64_t first = 0, count = 0;
};

struct GgufTensor {
  std::string name;
  uint32_t ggml_type;              // raw GGUF type id (validated to be one kiln knows)
  TensorType type;                 // the same, as kiln's enum
  std::vector<int64_t> dims;       // ne0 first; ne0 is the contiguous dimension
  uint64_t offset;                 // relative to the start of the data section
  uint64_t nbytes;                 // derived from type and shape
  const uint8_t* data = nullptr;   // into the mapping

  int64_t n_elements() const;
  // The same tensor cut to `rows` of its rows: a row of the file's matrix is
  // contiguous, so it is an offset into the same bytes. Throws kiln::Error
  // if the tensor is not 2-D or the rows are not all inside it.
  GgufTensor rows(RowRange rows) const;
};

// Bytes a tensor of `type` with shape `dims` (ne0 first) occupies. Throws
// kiln::Error starting with `what` (e.g. "model.gguf: tensor 'x'") when the
// shape is invalid: not 1..kMaxTensorDims dims, a dim below 1, ne0 not a
// multiple of the type's block size, or a size beyond int64.
uint64_t tensor_nbytes(TensorType type, std::span<const int64_t> dims, const std::string& what);

class GgufFile {
 public:
  // Maps `path` and parses it. Throws kiln::Error on any problem.
  static GgufFile open(const std::string& path);
  // Parses an in-memory image (used by tests); the bytes are copied.
  static GgufFile from_bytes(std::span<const uint8_t> bytes, const std::string& name = "<memory>");
  // Parses a file's metadata and tensor directory only, `bytes` being the
  // file's first data_offset() bytes (a model's weights built into a program,
  // models/weight_image.hpp). The bytes are not copied and must outlive the
  // result; every tensor's `data` is null, and nothing else differs.
  static GgufFile from_header(std::span<const uint8_t> bytes, const std::string& name);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the data section in the file
  size_t file_size() const { return size_; }
  // The file's first data_offset() bytes: its metadata and tensor directory (what from_header reads).
  std::span<const uint8_t> header_bytes() const { return {base_, std::min<size_t>(data_offset_, size_)}; }

  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

  // The file opened (nullopt for from_bytes), for caches of results about its bytes.
  const std::optional<FileIdentity>& identity() const { return identity_; }
  // content_hash of every byte of the file (engine/files/content_hash.hpp:
  // XXH3-64, as `xxhsum -H3 FILE` prints it). A mapped file is read a few MB
  // at a time, each part's pages handed back to the kernel after, so that
  // hashing leaves no more of the file resident than there was before.
  uint64_t hash_contents() const;

  const GgufValue* find(std::string_view key) const;
  const GgufTensor* find_tensor(std::string_view name) const;

  // Typed getters. The `_or` forms return the fallback when the key is absent;
  // all of them throw kiln::Error when the key exists with an incompatible type.
  // Integers of any GGUF integer type are accepted when the value fits.
  std::string get_string(std::string_view key) const;                   // throws if absent
  std::string get_string_or(std::string_view key, std::string fallback) const;
  uint64_t get_uint(std::string_view key) const;                        // throws if absent
  uint64_t get_uint_or(std::string_view key, uint64_t fallback) const;
  int64_t get_int_or(std::string_view key, int64_t fallback) const;
  double get_float_or(std::string_view key, double fallback) const;    // FLOAT32/FLOAT64 (or integer)
  bool get_bool_or(std::string_view key, bool fallback) const;
  // Arrays: the element type must match (strings / floats / integers).
  std::vector<std::string> get_string_array(std::string_view key) const;  // throws if absent
  // get_string_array without the copies: each string viewed in the file.
  void for_each_string(std::string_view key, const std::function<void(std::string_view)>& visit) const;
  std::vector<float> get_float_array_or_empty(std::string_view key) const;
  std::vector<int32_t> get_int_array_or_empty(std::string_view key) const;

 private:
  GgufFile() = default;
  void parse(bool with_data = true);

  std::string path_;
  const uint8_t* base_ = nullptr;  // the whole file image
  size_t size_ = 0;
  void* mapping_ = nullptr;        // mmap result (nullptr for from_bytes)
  std::vector<uint8_t> owned_;     // storage for from_bytes
  std::optional<FileIdentity> identity_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensor> tensors_;
};

}  // namespace kiln
