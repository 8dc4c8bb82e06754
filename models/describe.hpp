// Reading a model description (architecture, hyperparameters, tensors) out of
// a GGUF file. Each architecture kiln knows has its reader under models/<arch>/;
// this is the one entry point that picks it.
#pragma once

#include "engine/gguf/gguf.hpp"
#include "engine/model_desc.hpp"

namespace kiln {

// Throws kiln::Error naming the problem when the file's architecture is
// unknown or its metadata and tensors do not form a model kiln can run.
ModelDesc describe_model(const GgufFile& file);

ModelDesc describe_llama(const GgufFile& file);
ModelDesc describe_qwen2(const GgufFile& file);

}  // namespace kiln
