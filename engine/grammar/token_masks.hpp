// Which tokens a grammar state allows next, over a whole vocabulary: the
// vocabulary's trie walked with the automaton, a subtree skipped as soon as
// its prefix cannot be read. Each node costs one lookup in the automaton's
// table of steps once the states it passes through have been seen, and
// inside strings, numbers and whitespace they recur. A state's mask is kept
// (up to a bound), so a state met again costs nothing.
//
// Not thread-safe: one object per generation, used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/grammar/parse_stacks.hpp"
#include "engine/grammar/token_trie.hpp"

namespace kiln::grammar {

// n_vocab bits, token id i at bit i % 64 of word i / 64.
using TokenBits = std::vector<uint64_t>;

class TokenMasks {
 public:
  explicit TokenMasks(std::shared_ptr<const TokenTrie> trie);

  // The tokens whose bytes can follow `state`, end-of-generation tokens not
  // included. Valid until the next call.
  const TokenBits& allowed(ParseStacks& stacks, uint32_t state);

 private:
  void walk(ParseStacks& stacks, uint32_t state, TokenBits& out);

  std::shared_ptr<const TokenTrie> trie_;
  std::unordered_map<uint32_t, TokenBits> masks_;  // by state, of stacks' generation_
  uint64_t generation_ = 0;
  std::vector<uint32_t> levels_;  // walk(): the state after each depth's byte
};

}  // namespace kiln::grammar
