// Weight types as GGUF numbers them, and the byte layout facts every part of
// kiln (reader, codegen, kernels) needs about them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace kiln {

// Values are GGUF's ggml_type ids; only the types kiln can run are listed.
enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
  MXFP4 = 39,
};

struct TypeTraits {
  TensorType type;
  std::string_view name;       // as llama.cpp prints it, e.g. "q8_0"
  std::string_view enum_name;  // the C++ enumerator, e.g. "Q8_0" (used by codegen)
  int block_elems;             // elements per block (1 for plain floats)
  int block_bytes;             // bytes per block
};

inline constexpr TypeTraits kTypeTraits[] = {
    {TensorType::F32, "f32", "F32", 1, 4},
    {TensorType::F16, "f16", "F16", 1, 2},
    {TensorType::Q4_0, "q4_0", "Q4_0", 32, 18},
    {TensorType::Q5_0, "q5_0", "Q5_0", 32, 22},
    {TensorType::Q5_1, "q5_1", "Q5_1", 32, 24},
    {TensorType::Q8_0, "q8_0", "Q8_0", 32, 34},
    {TensorType::Q2_K, "q2_k", "Q2_K", 256, 84},
    {TensorType::Q3_K, "q3_k", "Q3_K", 256, 110},
    {TensorType::Q4_K, "q4_k", "Q4_K", 256, 144},
    {TensorType::Q5_K, "q5_k", "Q5_K", 256, 176},
    {TensorType::Q6_K, "q6_k", "Q6_K", 256, 210},
    {TensorType::IQ4_NL, "iq4_nl", "IQ4_NL", 32, 18},
    {TensorType::IQ4_XS, "iq4_xs", "IQ4_XS", 256, 136},
    {TensorType::BF16, "bf16", "BF16", 1, 2},
    {TensorType::MXFP4, "mxfp4", "MXFP4", 32, 17},
};

// Traits of a GGUF type id, or nullopt when kiln does not support it.
constexpr std::optional<TypeTraits> type_traits(uint32_t ggml_type) {
  for (const auto& t : kTypeTraits)
    if (static_cast<uint32_t>(t.type) == ggml_type) return t;
  return std::nullopt;
}

constexpr TypeTraits traits_of(TensorType t) { return *type_traits(static_cast<uint32_t>(t)); }

// Bytes of one row of n elements (n must be a multiple of the block size).
constexpr size_t row_bytes(TensorType t, int64_t n) {
  const auto tr = traits_of(t);
  return static_cast<size_t>(n / tr.block_elems) * static_cast<size_t>(tr.block_bytes);
}

// Name of any ggml type id (also the ones kiln refuses), for error messages.
constexpr std::string_view ggml_type_name(uint32_t ggml_type) {
  constexpr std::string_view names[] = {
      "f32",  "f16",  "q4_0", "q4_1", "q4_2 (removed)", "q4_3 (removed)", "q5_0", "q5_1", "q8_0",
      "q8_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "iq2_xxs", "iq2_xs", "iq3_xxs",
      "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs", "i8", "i16", "i32", "i64", "f64", "iq1_m",
      "bf16", "q4_0_4_4 (removed)", "q4_0_4_8 (removed)", "q4_0_8_8 (removed)", "tq1_0", "tq2_0",
      "iq4_nl_4_4 (removed)", "iq4_nl_4_8 (removed)", "iq4_nl_8_8 (removed)", "mxfp4"};
  return ggml_type < std::size(names) ? names[ggml_type] : "unknown";
}

}  // namespace kiln
