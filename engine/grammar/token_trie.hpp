// A vocabulary as a trie of the tokens' bytes, its nodes in depth-first
// order: the subtree of node i is the nodes [i, end), so a walk that finds
// a prefix impossible skips every token that starts with it in one jump.
// Node 0 is the root (the empty prefix).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/tokenizer/token_texts.hpp"

namespace kiln {
class Tokenizer;
}

namespace kiln::grammar {

class TokenTrie {
 public:
  struct Node {
    uint32_t end;   // one past the last node of this subtree
    int32_t token;  // the first token whose bytes end here, or -1
    uint16_t depth;
    uint8_t byte;   // the byte that leads here from the parent
  };

  // texts[id]: the bytes token `id` stands for in generated text. Tokens
  // with none (control tokens) never match a grammar and are left out, as
  // are `end_of_generation`, the tokens that end a generation.
  TokenTrie(const std::vector<std::string_view>& texts, std::vector<int32_t> end_of_generation);
  // The vocabulary's tokens by their text; the control tokens in `kept`
  // (those a tool-call format writes, such as Mistral's [TOOL_CALLS]) by
  // their piece, which the generated text then holds.
  static TokenTrie from_tokenizer(const Tokenizer& tok, std::span<const int32_t> kept = {});

  int n_vocab() const { return static_cast<int>(texts_.size()); }
  std::string_view text(int32_t token) const { return texts_.at(static_cast<size_t>(token)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  // Tokens with the same bytes as `token` (vocabularies have a few): the
  // next one, or -1.
  int32_t next_same(int32_t token) const { return next_same_[token]; }
  const std::vector<int32_t>& end_of_generation() const { return end_of_generation_; }

 private:
  TokenTexts texts_;
  std::vector<Node> nodes_;
  std::vector<int32_t> next_same_;
  std::vector<int32_t> end_of_generation_;
};

}  // namespace kiln::grammar
