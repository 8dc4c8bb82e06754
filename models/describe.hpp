// The architectures kiln compiles, and reading a model description
// (architecture, hyperparameters, layer kinds, tensors) out of a GGUF file.
// Each architecture is a folder, models/<arch>/: its layer (<arch>.hpp, or
// another architecture's where they compute the same) and its describe.cpp;
// each defines its Architecture there, and kArchitectures (describe.cpp) is
// the one list that names them all.
#pragma once

#include <span>
#include <string_view>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model_desc.hpp"

namespace kiln {

// The RoPE frequency factor tensors an architecture's files may hold.
enum class RopeFactors {
  None,
  Freqs,      // rope_freqs.weight (Llama 3.1)
  LongShort,  // rope_factors_long.weight and rope_factors_short.weight (LongRoPE: Phi-3)
};

struct Architecture {
  std::string_view name;    // general.architecture, also the prefix of its keys
  std::string_view header;  // the header generated code includes for its layer
  std::string_view type;    // the C++ type whose layer() the forward pass calls
  // The tensors of every block, by their names in models/decoder/block_tensors.hpp.
  std::span<const std::string_view> block;
  RopeFactors rope_factors = RopeFactors::None;
  // The fused matrices of every block, after `block`, by their names in
  // kFusedTensors (block_tensors.hpp).
  std::span<const std::string_view> fused = {};
  // Reads a file's description where the architecture reads more than
  // read_decoder does (read_decoder.hpp), and calls it first; null: read_decoder alone.
  ModelDesc (*describe)(const GgufFile&) = nullptr;
};

// The architecture of that name; throws kiln::Error listing the known ones.
const Architecture& architecture(std::string_view name, const std::string& where);

// Throws kiln::Error naming the problem when the file's architecture is
// unknown or its metadata and tensors do not form a model kiln can run.
ModelDesc describe_model(const GgufFile& file);

}  // namespace kiln
