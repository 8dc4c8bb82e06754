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
#include "engine/model_desc.hpp"

namespace kiln {

struct Architecture {
  std::string_view name;    // general.architecture, also the prefix of its keys
  std::string_view header;  // the header generated code includes for its layer
  std::string_view type;    // the C++ type whose layer() the forward pass calls
  // The tensors of every block, by their names in models/decoder/block_tensors.hpp.
  std::span<const std::string_view> block;
  // Reads a file's description; most are read_decoder and what the
  // architecture adds (read_decoder.hpp).
  ModelDesc (*describe)(const GgufFile&);
  bool rope_freqs_allowed = false;  // may have rope_freqs.weight (Llama 3.1 frequency factors)
};

// The architecture of that name; throws kiln::Error listing the known ones.
const Architecture& architecture(std::string_view name, const std::string& where);

// Throws kiln::Error naming the problem when the file's architecture is
// unknown or its metadata and tensors do not form a model kiln can run.
ModelDesc describe_model(const GgufFile& file);

}  // namespace kiln
