// A 64-bit name for a model's weights, which saved states carry so they are
// only ever restored into the model that computed them.
#pragma once

#include <cstdint>

#include "engine/gguf.hpp"
#include "engine/model_desc.hpp"

namespace kiln {

// ModelDesc::fingerprint() (architecture, hyperparameters, tensor names,
// types and shapes) extended with a sample of every tensor's bytes (its
// start, middle and end), so a fine-tune of the same shape is another model.
// Reads a few hundred bytes per tensor. Throws kiln::Error if `file` lacks a
// tensor `desc` lists.
uint64_t model_fingerprint(const ModelDesc& desc, const GgufFile& file);

}  // namespace kiln
