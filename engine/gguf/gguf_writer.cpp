// GGUF v3 writer. Metadata values are encoded as they are added, so a bad
// value is reported at the add() call that supplied it.
#include "engine/gguf/gguf_writer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "engine/files/atomic_file.hpp"

namespace kiln {

namespace {

constexpr uint32_t kWrittenVersion = 3;

template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof value);
  std::memcpy(out.data() + at, &value, sizeof value);
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

[[noreturn]] void mismatch(const std::string& key, const GgufValue& v) {
  throw Error("GgufWriter: key '" + key + "': value does not fit its type " + std::string(gguf_type_name(v.type)));
}

template <typename Int>
Int integer(const GgufValue& v, const std::string& key) {
  const auto x = v.as_integer<Int>();
  if (!x) mismatch(key, v);
  return *x;
}

template <typename T>
const T& alternative(const GgufValue& v, const std::string& key) {
  const T* x = std::get_if<T>(&v.value);
  if (!x) mismatch(key, v);
  return *x;
}

void put_value(std::vector<uint8_t>& out, const GgufValue& v, const std::string& key) {
  switch (v.type) {
    case GgufValueType::UINT8: return put(out, integer<uint8_t>(v, key));
    case GgufValueType::INT8: return put(out, integer<int8_t>(v, key));
    case GgufValueType::UINT16: return put(out, integer<uint16_t>(v, key));
    case GgufValueType::INT16: return put(out, integer<int16_t>(v, key));
    case GgufValueType::UINT32: return put(out, integer<uint32_t>(v, key));
    case GgufValueType::INT32: return put(out, integer<int32_t>(v, key));
    case GgufValueType::UINT64: return put(out, integer<uint64_t>(v, key));
    case GgufValueType::INT64: return put(out, integer<int64_t>(v, key));
    case GgufValueType::FLOAT32: return put(out, static_cast<float>(alternative<double>(v, key)));
    case GgufValueType::FLOAT64: return put(out, alternative<double>(v, key));
    case GgufValueType::BOOL: return put<uint8_t>(out, alternative<bool>(v, key) ? 1 : 0);
    case GgufValueType::STRING: return put_string(out, alternative<std::string>(v, key));
    case GgufValueType::ARRAY: {
      // Already encoded: decoding it once checks that the bytes hold what
      // the array says they do.
      const auto& array = alternative<GgufArray>(v, key);
      array.for_each([](const GgufValue&) {});
      put(out, static_cast<uint32_t>(array.elem_type));
      put<uint64_t>(out, array.count);
      out.insert(out.end(), array.encoded.begin(), array.encoded.end());
      return;
    }
  }
  throw Error("GgufWriter: key '" + key + "': unknown value type " + std::to_string(static_cast<uint32_t>(v.type)));
}

void put_key_value(std::vector<uint8_t>& out, const std::string& key, const GgufValue& value) {
  put_string(out, key);
  put(out, static_cast<uint32_t>(value.type));
  put_value(out, value, key);
}

}  // namespace

GgufArray gguf_array(GgufValueType elem_type, std::span<const GgufValue> items) {
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  for (const GgufValue& item : items) {
    if (item.type != elem_type) mismatch("array element", item);
    put_value(*bytes, item, "array element");
  }
  GgufArray array;
  array.elem_type = elem_type;
  array.count = items.size();
  array.encoded = *bytes;
  array.storage = std::move(bytes);
  return array;
}

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  if (!std::has_single_bit(alignment) || alignment > UINT32_MAX)
    throw Error("GgufWriter: alignment " + std::to_string(alignment) + " is not a power of two below 2^32");
}

void GgufWriter::add(const std::string& key, const GgufValue& value) {
  if (key == "general.alignment")
    throw Error("GgufWriter: set general.alignment through the constructor, not add()");
  if (keys_.contains(key)) throw Error("GgufWriter: key '" + key + "' added twice");
  std::vector<uint8_t> encoded;  // appended only once the whole value encoded
  put_key_value(encoded, key, value);
  metadata_.insert(metadata_.end(), encoded.begin(), encoded.end());
  keys_.insert(key);
}

void GgufWriter::add_string(const std::string& key, std::string v) {
  add(key, {GgufValueType::STRING, std::move(v)});
}

void GgufWriter::add_u32(const std::string& key, uint32_t v) { add(key, {GgufValueType::UINT32, uint64_t{v}}); }

void GgufWriter::add_f32(const std::string& key, float v) { add(key, {GgufValueType::FLOAT32, double{v}}); }

void GgufWriter::add_bool(const std::string& key, bool v) { add(key, {GgufValueType::BOOL, v}); }

void GgufWriter::add_string_array(const std::string& key, std::vector<std::string> v) {
  std::vector<GgufValue> items;
  for (std::string& s : v) items.push_back({GgufValueType::STRING, std::move(s)});
  add(key, {GgufValueType::ARRAY, gguf_array(GgufValueType::STRING, items)});
}

void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& v) {
  std::vector<GgufValue> items;
  for (float x : v) items.push_back({GgufValueType::FLOAT32, double{x}});
  add(key, {GgufValueType::ARRAY, gguf_array(GgufValueType::FLOAT32, items)});
}

void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  std::vector<GgufValue> items;
  for (int32_t x : v) items.push_back({GgufValueType::INT32, int64_t{x}});
  add(key, {GgufValueType::ARRAY, gguf_array(GgufValueType::INT32, items)});
}

void GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<int64_t> dims,
                            std::vector<uint8_t> data) {
  const std::string what = "GgufWriter: tensor '" + name + "'";
  if (std::any_of(tensors_.begin(), tensors_.end(), [&](const PendingTensor& t) { return t.name == name; }))
    throw Error(what + " added twice");
  const uint64_t nbytes = tensor_nbytes(type, dims, what);
  if (data.size() != nbytes)
    throw Error(what + " has " + std::to_string(data.size()) + " bytes of data; its type and shape need " +
                std::to_string(nbytes));
  tensors_.push_back({name, type, std::move(dims), std::move(data)});
}

std::vector<uint8_t> GgufWriter::bytes() const {
  const bool custom_alignment = alignment_ != kGgufDefaultAlignment;
  std::vector<uint8_t> out(std::begin(kGgufMagic), std::end(kGgufMagic));
  put(out, kWrittenVersion);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, keys_.size() + (custom_alignment ? 1 : 0));
  if (custom_alignment) put_key_value(out, "general.alignment", {GgufValueType::UINT32, alignment_});
  out.insert(out.end(), metadata_.begin(), metadata_.end());

  // Each tensor starts at the next aligned offset of the data section.
  std::vector<uint64_t> offsets;
  uint64_t next = 0;
  for (const PendingTensor& t : tensors_) {
    offsets.push_back(gguf_align(next, alignment_));
    next = offsets.back() + t.data.size();
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    put_string(out, t.name);
    put(out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) put(out, static_cast<uint64_t>(d));
    put(out, static_cast<uint32_t>(t.type));
    put(out, offsets[i]);
  }
  const uint64_t data_offset = gguf_align(out.size(), alignment_);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    out.resize(data_offset + offsets[i]);  // zero padding up to the tensor
    out.insert(out.end(), tensors_[i].data.begin(), tensors_[i].data.end());
  }
  return out;
}

void GgufWriter::write(const std::string& path) const { write_file_atomically(path, bytes()); }

}  // namespace kiln
