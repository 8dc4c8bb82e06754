// A 64-bit name for a model's weights, which saved states carry so they are
// only ever restored into the model that computed them.
#pragma once

#include <cstdint>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model_desc.hpp"

namespace kiln {

// ModelDesc::fingerprint() (architecture, hyperparameters, tensor names,
// types and shapes) combined with the content hash of every byte of the file,
// weights, tokenizer and metadata alike: a file that differs anywhere is
// another model. Hashing runs at about memory speed (a GB in a fraction of a
// second) and its result is cached per file version (engine/files/file_cache.hpp),
// so a file is hashed once, not at every start. Throws kiln::Error if `file`
// lacks a tensor `desc` lists.
uint64_t model_fingerprint(const ModelDesc& desc, const GgufFile& file);

// The same from the file's content hash, for weights built into a program
// (models/weight_image.hpp), which record their GGUF's: the program then
// names its weights exactly as one reading that GGUF does.
uint64_t model_fingerprint(const ModelDesc& desc, uint64_t file_hash);

// content_hash of every byte of `file`, from the cache when this version of
// the file was hashed before (and recorded there when not).
uint64_t file_content_hash(const GgufFile& file);

}  // namespace kiln
