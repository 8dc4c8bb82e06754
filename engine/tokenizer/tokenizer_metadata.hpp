// Reading and checking the tokenizer.ggml.* metadata of a GGUF file. Every
// problem is a kiln::Error naming the file and the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/token_texts.hpp"
#include "engine/tokenizer/tokenizer_types.hpp"

namespace kiln {

// tokenizer.ggml.token_type, one known type per token; every Byte token must
// be spelled "<0xNN>".
std::vector<TokenType> read_token_types(const GgufFile& f, const TokenTexts& pieces);

// tokenizer.ggml.scores, one per token.
std::vector<float> read_scores(const GgufFile& f, size_t n_tokens);

// The token id stored under `key`, checked to be in the vocab; `fallback`
// when the key is absent.
int32_t read_token_id(const GgufFile& f, const std::string& key, uint32_t fallback, size_t n_tokens);

// The same for a key whose absence means "no such token". GGUF files also
// spell that as 0xFFFFFFFF (and llama.cpp's converter writes it that way).
std::optional<int32_t> read_optional_token_id(const GgufFile& f, const std::string& key, size_t n_tokens);

}  // namespace kiln
