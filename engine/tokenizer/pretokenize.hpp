// Pre-tokenization for byte-level BPE: splitting text into the pieces that
// are merged separately, as the Hugging Face tokenizer of each model family
// does with its regular expressions. The expressions are implemented by hand
// over code points and their Unicode categories.
#pragma once

#include <string_view>
#include <vector>

namespace kiln {

// The model families whose pre-tokenizer kiln knows; each comment gives the
// expression(s) in HF syntax. Several expressions are applied in turn, each
// splitting every piece the previous ones produced: a match becomes a piece,
// and so does each stretch of text between matches.
enum class PreTokenizer {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Gpt2,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Llama3,
  // as Llama3, with \p{N} (single digits) for \p{N}{1,3}
  Qwen2,
  // GPT-4o's (Phi-4-mini's) in the form llama.cpp runs, which splits words
  // where their case changes but knows case only in ASCII. With U = a letter
  // other than a-z and W = a letter other than A-Z (so any other letter is
  // both, and a combining mark, which the original counts with the letters,
  // is neither) and C = (?i:'s|'t|'re|'ve|'m|'ll|'d):
  // [^\r\n\p{L}\p{N}]?U*W+C?|[^\r\n\p{L}\p{N}]?U+W*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Gpt4o,
  // [\r\n], \s?[<cased letters>]+, \s?[!-/:-~！-／：-～‘-‟　-。]+, \s+$, [一-龥ࠀ-一가-퟿]+, \p{N}+
  DeepseekLlm,
  // [\r\n], \s?\p{L}+, \s?\p{P}+, [一-龥ࠀ-一가-퟿]+, \p{N}
  DeepseekCoder,
  // \p{N}, then Gpt2 (SmolLM; llama.cpp's StarCoder group)
  Smollm,
  // llama.cpp's fallback: [\p{P}\$\+<=>\^~\|]+, Gpt2, \p{N}+, [0-9][0-9][0-9]
  Default,
};

// Appends the pieces of `text` to `pieces`, in order; together they are
// exactly `text`. Bytes that are not valid UTF-8 count as U+FFFD (a symbol)
// but stay as they are in the pieces.
void pretokenize(PreTokenizer kind, std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace kiln
