// The decoder that every GGUF architecture kiln knows shares (token
// embedding, pre-norm attention with RoPE and grouped-query heads, a gated
// feed-forward, final norm and classifier): its hyperparameters and its
// tensors. Each architecture's describe.cpp (models/<arch>/) states which
// tensors its blocks hold (its Architecture, models/describe.hpp), and reads
// what else its files say (a sliding window, which layers have RoPE) after
// read_decoder.
#pragma once

#include <string>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model_desc.hpp"
#include "models/describe.hpp"

namespace kiln {

// Hyperparameters (with llama.cpp's defaults where keys are absent), every
// layer global with RoPE, and the tensor list, checked against each other.
// Throws kiln::Error naming the key or tensor that is missing, malformed or
// not part of the architecture.
ModelDesc read_decoder(const GgufFile& file, const Architecture& arch);

// A count key of the architecture (prefix "<arch>."), or `fallback` when absent;
// throws kiln::Error for a value that cannot be a count.
int count_key(const GgufFile& file, const std::string& key, uint64_t fallback);

}  // namespace kiln
