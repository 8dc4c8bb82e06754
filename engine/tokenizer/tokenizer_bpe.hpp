// Byte-level BPE as GGUF describes it (tokenizer.ggml.model = "gpt2"): the
// text is pre-tokenized as tokenizer.ggml.pre says, each piece starts as one
// token per byte, and adjacent tokens merge in the order of
// tokenizer.ggml.merges (the lowest rank first; on ties, the leftmost).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/pretokenize.hpp"
#include "engine/tokenizer/tokenizer_token_index.hpp"

namespace kiln {

// What a tokenizer.ggml.pre value stands for.
struct BpeFlavor {
  PreTokenizer pre_tokenizer;
  bool ignore_merges;  // a piece that is a vocab token as a whole is that token (Llama 3)
  bool add_bos;        // the default of tokenizer.ggml.add_bos_token
};

// The flavor a tokenizer.ggml.pre value names (following llama.cpp's names
// and defaults), or nullopt for a name kiln does not know.
std::optional<BpeFlavor> bpe_flavor(std::string_view pre);

// The names bpe_flavor knows, for error messages ("llama3, llama-v3, ...").
std::string known_bpe_flavors();

class BpeModel {
 public:
  // `pieces` are the vocab texts (byte-level alphabet, see
  // tokenizer_byte_level.hpp), `merges` the "left right" pairs by rank.
  // Throws kiln::Error starting with `where` when a byte value has no token,
  // or a merge is not two tokens separated by a space whose concatenation is
  // a token too.
  BpeModel(std::string_view where, const TokenTexts& pieces, const std::vector<std::string>& merges,
           BpeFlavor flavor);

  // Appends the ids of `text`, or stops after a pre-tokenized piece once
  // `out` holds more than max_tokens ids (pieces are encoded independently,
  // so those ids are final).
  void encode(std::string_view text, size_t max_tokens, std::vector<int32_t>& out) const;

 private:
  // What the pair of tokens `pair` ((left id << 32) | right id) merges into.
  struct Merge {
    uint64_t pair;
    int32_t rank;
    int32_t result;
  };

  // Appends the ids of one pre-tokenized piece (not empty).
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;
  const Merge* find_merge(int32_t left, int32_t right) const;
  size_t first_slot(uint64_t pair) const;
  void add_merge(const Merge& merge);

  BpeFlavor flavor_;
  std::array<int32_t, 256> byte_ids_{};
  // An open-addressing table (a power of two, at most three quarters full),
  // for the same reason as TokenIndex.
  std::vector<Merge> merges_;
  TokenIndex tokens_;  // every token by its text, kept only for ignore_merges
};

}  // namespace kiln
