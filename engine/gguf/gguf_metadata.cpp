// Looking up metadata and tensors in a parsed GGUF file, and the typed
// getters that turn a wrong or missing value into a one-line kiln::Error.
#include <algorithm>

#include "engine/gguf/gguf.hpp"

namespace kiln {

std::string_view gguf_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8: return "uint8";
    case GgufValueType::INT8: return "int8";
    case GgufValueType::UINT16: return "uint16";
    case GgufValueType::INT16: return "int16";
    case GgufValueType::UINT32: return "uint32";
    case GgufValueType::INT32: return "int32";
    case GgufValueType::FLOAT32: return "float32";
    case GgufValueType::BOOL: return "bool";
    case GgufValueType::STRING: return "string";
    case GgufValueType::ARRAY: return "array";
    case GgufValueType::UINT64: return "uint64";
    case GgufValueType::INT64: return "int64";
    case GgufValueType::FLOAT64: return "float64";
  }
  return "unknown";
}

namespace {

bool is_integer(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8: case GgufValueType::INT8: case GgufValueType::UINT16:
    case GgufValueType::INT16: case GgufValueType::UINT32: case GgufValueType::INT32:
    case GgufValueType::UINT64: case GgufValueType::INT64:
      return true;
    default:
      return false;
  }
}

bool is_float(GgufValueType t) { return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64; }

// "string", or "array of string" for arrays.
std::string describe(const GgufValue& v) {
  std::string s(gguf_type_name(v.type));
  if (const auto* array = std::get_if<GgufArray>(&v.value)) s += " of " + std::string(gguf_type_name(array->elem_type));
  return s;
}

std::string key_text(const GgufFile& f, std::string_view key) {
  return f.path() + ": key '" + std::string(key) + "'";
}

[[noreturn]] void wrong_type(const GgufFile& f, std::string_view key, const GgufValue& v, std::string_view expected) {
  throw Error(key_text(f, key) + " has type " + describe(v) + ", expected " + std::string(expected));
}

const GgufValue& require(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (!v) throw Error(f.path() + ": missing key '" + std::string(key) + "'");
  return *v;
}

std::string integer_text(const GgufValue& v) {
  if (const auto* u = std::get_if<uint64_t>(&v.value)) return std::to_string(*u);
  return std::to_string(std::get<int64_t>(v.value));
}

// `v` (the value of `key`, or an element of it) as Int; `int_name` is Int's
// name for the error message.
template <typename Int>
Int integer(const GgufFile& f, std::string_view key, const GgufValue& v, std::string_view int_name) {
  if (!is_integer(v.type)) wrong_type(f, key, v, "an integer");
  if (const auto x = v.as_integer<Int>()) return *x;
  throw Error(key_text(f, key) + " holds " + integer_text(v) + ", which does not fit in " + std::string(int_name));
}

double real(const GgufFile& f, std::string_view key, const GgufValue& v) {
  if (is_float(v.type)) return std::get<double>(v.value);
  if (!is_integer(v.type)) wrong_type(f, key, v, "a number");
  if (const auto* u = std::get_if<uint64_t>(&v.value)) return static_cast<double>(*u);
  return static_cast<double>(std::get<int64_t>(v.value));
}

// Array `key`, after checking its element type with `accepts`.
const GgufArray& array_of(const GgufFile& f, std::string_view key, const GgufValue& v,
                          bool (*accepts)(GgufValueType), std::string_view expected) {
  const auto* array = std::get_if<GgufArray>(&v.value);
  if (!array || !accepts(array->elem_type)) wrong_type(f, key, v, expected);
  return *array;
}

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = kv_.find(std::string(key));
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  const auto it = std::find_if(tensors_.begin(), tensors_.end(), [&](const GgufTensor& t) { return t.name == name; });
  return it == tensors_.end() ? nullptr : &*it;
}

std::string GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  if (v.type != GgufValueType::STRING) wrong_type(*this, key, v, "a string");
  return std::get<std::string>(v.value);
}

std::string GgufFile::get_string_or(std::string_view key, std::string fallback) const {
  return find(key) ? get_string(key) : fallback;
}

uint64_t GgufFile::get_uint(std::string_view key) const {
  return integer<uint64_t>(*this, key, require(*this, key), "uint64");
}

uint64_t GgufFile::get_uint_or(std::string_view key, uint64_t fallback) const {
  return find(key) ? get_uint(key) : fallback;
}

int64_t GgufFile::get_int_or(std::string_view key, int64_t fallback) const {
  const GgufValue* v = find(key);
  return v ? integer<int64_t>(*this, key, *v, "int64") : fallback;
}

double GgufFile::get_float_or(std::string_view key, double fallback) const {
  const GgufValue* v = find(key);
  return v ? real(*this, key, *v) : fallback;
}

bool GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  const GgufValue* v = find(key);
  if (!v) return fallback;
  if (v->type != GgufValueType::BOOL) wrong_type(*this, key, *v, "a bool");
  return std::get<bool>(v->value);
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  std::vector<std::string> out;
  for_each_string(key, [&](std::string_view item) { out.emplace_back(item); });
  return out;
}

void GgufFile::for_each_string(std::string_view key, const std::function<void(std::string_view)>& visit) const {
  const auto is_string = [](GgufValueType t) { return t == GgufValueType::STRING; };
  array_of(*this, key, require(*this, key), is_string, "an array of strings").for_each_string(visit);
}

std::vector<float> GgufFile::get_float_array_or_empty(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return {};
  const GgufArray& array = array_of(*this, key, *v, is_float, "an array of floats");
  std::vector<float> out;
  out.reserve(array.count);
  array.for_each([&](const GgufValue& item) { out.push_back(static_cast<float>(std::get<double>(item.value))); });
  return out;
}

std::vector<int32_t> GgufFile::get_int_array_or_empty(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return {};
  const GgufArray& array = array_of(*this, key, *v, is_integer, "an array of integers");
  std::vector<int32_t> out;
  out.reserve(array.count);
  array.for_each([&](const GgufValue& item) { out.push_back(integer<int32_t>(*this, key, item, "int32")); });
  return out;
}

}  // namespace kiln
