// Which tokens end generation. GGUF names only some of them by key (EOS,
// EOT, ...); the chat and fill-in-the-middle markers of many models are
// found by their text, as llama.cpp does (its issue 9606).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/token_texts.hpp"

namespace kiln {

// Sorted, without repeats. `eos` is -1 when the vocab has none.
std::vector<int32_t> end_of_generation_ids(const GgufFile& f, const TokenTexts& pieces, int32_t eos);

}  // namespace kiln
