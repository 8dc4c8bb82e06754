#include "engine/grammar/token_masks.hpp"

namespace kiln::grammar {

namespace {

// States whose masks are kept; past this the cache starts over.
constexpr size_t kMaxCachedStates = 256;

}  // namespace

TokenMasks::TokenMasks(std::shared_ptr<const TokenTrie> trie) : trie_(std::move(trie)) {}

// Depth-first over the trie: levels_[d] is the state after the d bytes of
// the current node's prefix.
void TokenMasks::walk(ParseStacks& stacks, uint32_t state, TokenBits& out) {
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  levels_.resize(1);
  levels_[0] = state;
  const auto n = static_cast<uint32_t>(nodes.size());
  for (uint32_t i = 1; i < n;) {
    const TokenTrie::Node& node = nodes[i];
    const uint32_t next = stacks.step(levels_[node.depth - 1u], node.byte);
    if (next == ParseStacks::kDead) {
      i = node.end;
      continue;
    }
    if (levels_.size() <= node.depth) levels_.resize(node.depth + 1u);
    levels_[node.depth] = next;
    for (int32_t t = node.token; t >= 0; t = trie_->next_same(t))
      out[static_cast<size_t>(t) / 64] |= uint64_t{1} << (t % 64);
    ++i;
  }
}

const TokenBits& TokenMasks::allowed(ParseStacks& stacks, uint32_t state) {
  if (stacks.generation() != generation_) {
    masks_.clear();
    generation_ = stacks.generation();
  }
  if (const auto it = masks_.find(state); it != masks_.end()) return it->second;
  TokenBits bits((static_cast<size_t>(trie_->n_vocab()) + 63) / 64, 0);
  walk(stacks, state, bits);
  // The walk may have compacted nothing (only Matcher::accept compacts), so
  // `state` is still an id of this generation.
  if (masks_.size() >= kMaxCachedStates) masks_.clear();
  return masks_.emplace(state, std::move(bits)).first->second;
}

}  // namespace kiln::grammar
