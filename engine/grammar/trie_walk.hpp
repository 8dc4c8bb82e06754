// Walks part of a token trie with a grammar state: every node whose bytes
// (from where the walk starts) the state can read is visited with the state
// after them, in depth-first order; a subtree whose first byte it cannot
// read is skipped whole.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/grammar/parse_stacks.hpp"
#include "engine/grammar/token_trie.hpp"

namespace kiln::grammar {

// Visits the nodes [begin, end) of `trie`: whole subtrees whose parent's
// bytes led to `base`. visit(node, state) for each node the state can reach.
// The frames made on the way are released at the end.
template <class Visit>
void walk_trie(ParseStacks& stacks, const TokenTrie& trie, uint32_t begin, uint32_t end,
               const std::vector<uint32_t>& base, Visit&& visit) {
  if (begin >= end) return;
  const std::vector<TokenTrie::Node>& nodes = trie.nodes();
  const size_t depth0 = nodes[begin].depth - 1u;
  // levels[k]: the state after k bytes below the walk's start; marks[k]: the
  // arena's size then, so a sibling subtree can drop the frames of the last.
  std::vector<std::vector<uint32_t>> levels(1, base);
  std::vector<size_t> marks(1, stacks.mark());
  for (uint32_t i = begin; i < end;) {
    const TokenTrie::Node& node = nodes[i];
    const size_t k = node.depth - depth0;
    if (levels.size() <= k) {
      levels.resize(k + 1);
      marks.resize(k + 1);
    }
    stacks.release(marks[k - 1]);
    std::vector<uint32_t>& state = levels[k];
    state.clear();
    stacks.advance(levels[k - 1], node.byte, state);
    if (state.empty()) {
      i = node.end;
      continue;
    }
    marks[k] = stacks.mark();
    visit(i, state);
    ++i;
  }
  stacks.release(marks[0]);
}

}  // namespace kiln::grammar
