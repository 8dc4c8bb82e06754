// Which tokens a grammar state allows next, over a whole vocabulary.
//
// A state is a few stacks; the tokens a stack allows are found by walking
// the vocabulary's trie with it, skipping every subtree whose prefix it
// cannot read. Most of that depends only on the stack's top frame, which
// recurs across states (the same string, number or whitespace rule under
// different enclosing rules), so each top (position and partial character)
// gets one walk, made once and kept, of the frame alone:
//   - the tokens it reads without leaving the frame (or leaving it exactly
//     at their last byte), accepted whatever lies below;
//   - "pending" subtrees: where the frame can end before a token does, the
//     rest of the token belongs to the frames below, so those subtrees are
//     walked again per state, from the frame below. Their first byte is
//     checked once per byte value, so a closing quote's pending tokens cost
//     little when the frame below reads only `,` or `}`.
// Whole states recur too (inside a string every character leads to the
// same state), so each state's mask is also kept, up to a bound.
//
// Not thread-safe: one object per generation, used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.hpp"
#include "engine/grammar/parse_stacks.hpp"
#include "engine/grammar/token_trie.hpp"

namespace kiln::grammar {

// n_vocab bits, token id i at bit i % 64 of word i / 64.
using TokenBits = std::vector<uint64_t>;

class TokenMasks {
 public:
  TokenMasks(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie);

  // The tokens whose bytes `state` (stacks of `stacks`) can read, end-of-
  // generation tokens not included. Valid until the next call.
  const TokenBits& allowed(ParseStacks& stacks, const std::vector<uint32_t>& state);

  const TokenTrie& trie() const { return *trie_; }

 private:
  struct TopMask {
    TokenBits bits;                // the frame's own tokens, when many
    std::vector<int32_t> tokens;   // or when few
    std::vector<uint32_t> pending; // trie nodes, sorted by their byte
  };
  const TopMask& top_mask(const Frame& top);
  TopMask walk_top(uint32_t position, uint32_t partial);
  void add_pending(ParseStacks& stacks, const Frame& top, const TopMask& m, TokenBits& out);
  void set_tokens_of(uint32_t node, TokenBits& out) const;
  std::string state_key(const ParseStacks& stacks, const std::vector<uint32_t>& state) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::unordered_map<uint64_t, TopMask> tops_;
  std::unordered_map<std::string, TokenBits> states_;
  TokenBits scratch_;
  std::vector<uint8_t> node_flags_;  // walk_top's per-node marks, all zero between walks
};

}  // namespace kiln::grammar
