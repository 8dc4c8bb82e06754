// libFuzzer target: any bytes as a GGUF file. Parsing, the model description,
// the tokenizer's metadata and every typed getter must either succeed or
// throw kiln::Error; what parses must re-encode (GgufWriter) to metadata
// that parses and re-encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "models/describe.hpp"

namespace {

// Reads every value through the getter of its type.
void read_every_value(const kiln::GgufFile& f) {
  for (const auto& [key, value] : f.metadata()) {
    try {
      if (const auto* array = std::get_if<kiln::GgufArray>(&value.value)) {
        array->for_each([](const kiln::GgufValue&) {});
        switch (array->elem_type) {
          case kiln::GgufValueType::STRING: f.get_string_array(key); break;
          case kiln::GgufValueType::FLOAT32: case kiln::GgufValueType::FLOAT64: f.get_float_array_or_empty(key); break;
          default: f.get_int_array_or_empty(key);
        }
      } else {
        f.get_float_or(key, 0);
      }
    } catch (const kiln::Error&) {
    }
  }
}

// The metadata re-encoded by GgufWriter (not the tensors).
std::vector<uint8_t> encode_metadata(const kiln::GgufFile& f) {
  kiln::GgufWriter w(f.alignment());
  for (const auto& [key, value] : f.metadata())
    if (key != "general.alignment") w.add(key, value);
  return w.bytes();
}

// Compared as bytes, since a NaN value never equals itself.
void check_rewrite(const kiln::GgufFile& f) {
  const std::vector<uint8_t> once = encode_metadata(f);
  try {
    if (encode_metadata(kiln::GgufFile::from_bytes(once)) != once) __builtin_trap();
  } catch (const kiln::Error&) {
    __builtin_trap();  // the writer's own output must read back
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const kiln::GgufFile f = kiln::GgufFile::from_bytes({data, size}, "fuzz.gguf");
    read_every_value(f);
    check_rewrite(f);
    try {
      kiln::describe_model(f);
    } catch (const kiln::Error&) {
    }
    kiln::Tokenizer::from_gguf(f);
  } catch (const kiln::Error&) {
  }
  return 0;
}
