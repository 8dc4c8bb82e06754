#include "engine/grammar/token_masks.hpp"

#include <algorithm>

#include "engine/grammar/trie_walk.hpp"

namespace kiln::grammar {

namespace {

// States whose masks are kept; past this the cache starts over.
constexpr size_t kMaxCachedStates = 256;

enum NodeFlag : uint8_t { kReached = 1, kFrameEnds = 2, kAllInFrame = 4 };

void set_bit(TokenBits& bits, int32_t token) { bits[static_cast<size_t>(token) / 64] |= uint64_t{1} << (token % 64); }

bool has_done(const std::vector<uint32_t>& state) {
  return std::find(state.begin(), state.end(), kDone) != state.end();
}

}  // namespace

TokenMasks::TokenMasks(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie)
    : grammar_(std::move(g)),
      trie_(std::move(trie)),
      scratch_((static_cast<size_t>(trie_->n_vocab()) + 63) / 64),
      node_flags_(trie_->nodes().size(), 0) {}

void TokenMasks::set_tokens_of(uint32_t node, TokenBits& out) const {
  for (int32_t t = trie_->nodes()[node].token; t >= 0; t = trie_->next_same(t)) set_bit(out, t);
}

// One walk of the frame alone (nothing below it: its end is kDone).
TokenMasks::TopMask TokenMasks::walk_top(uint32_t position, uint32_t partial) {
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  ParseStacks stacks(*grammar_);
  const std::vector<uint32_t> base{stacks.make(position, kNoFrame, partial)};
  std::vector<uint32_t> reached;
  walk_trie(stacks, *trie_, 1, static_cast<uint32_t>(nodes.size()), base,
            [&](uint32_t node, const std::vector<uint32_t>& state) {
              node_flags_[node] = kReached | (has_done(state) ? kFrameEnds : 0);
              reached.push_back(node);
            });

  // Children before parents: a subtree is all in the frame when its node
  // is reached and so are all its children's subtrees.
  for (auto it = reached.rbegin(); it != reached.rend(); ++it) {
    bool all = true;
    for (uint32_t c = *it + 1; c < nodes[*it].end && all; c = nodes[c].end) all = node_flags_[c] & kAllInFrame;
    if (all) node_flags_[*it] |= kAllInFrame;
  }

  TopMask m;
  std::vector<int32_t> tokens;
  for (const uint32_t node : reached) {
    for (int32_t t = nodes[node].token; t >= 0; t = trie_->next_same(t)) tokens.push_back(t);
    if (!(node_flags_[node] & kFrameEnds)) continue;
    for (uint32_t c = node + 1; c < nodes[node].end; c = nodes[c].end) {
      if (!(node_flags_[c] & kAllInFrame)) m.pending.push_back(c);
    }
  }
  for (const uint32_t node : reached) node_flags_[node] = 0;
  std::stable_sort(m.pending.begin(), m.pending.end(),
                   [&](uint32_t a, uint32_t b) { return nodes[a].byte < nodes[b].byte; });
  // A bitset costs n_vocab / 8 bytes and one pass of ORs; ids cost 4 bytes each.
  if (tokens.size() * 32 > static_cast<size_t>(trie_->n_vocab())) {
    m.bits.assign(scratch_.size(), 0);
    for (const int32_t t : tokens) set_bit(m.bits, t);
  } else {
    m.tokens = std::move(tokens);
  }
  return m;
}

const TokenMasks::TopMask& TokenMasks::top_mask(const Frame& top) {
  const uint64_t key = uint64_t{top.position} << 32 | top.partial;
  auto it = tops_.find(key);
  if (it == tops_.end()) it = tops_.emplace(key, walk_top(top.position, top.partial)).first;
  return it->second;
}

// The pending subtrees of a top, read by the frames below it.
void TokenMasks::add_pending(ParseStacks& stacks, const Frame& top, const TopMask& m, TokenBits& out) {
  if (m.pending.empty() || top.below == kNoFrame) return;
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  const size_t mark = stacks.mark();
  std::vector<uint32_t> below;
  stacks.expand(top.below, below);
  std::vector<uint32_t> after;
  for (size_t i = 0; i < m.pending.size();) {
    const uint8_t byte = nodes[m.pending[i]].byte;
    size_t group_end = i;
    while (group_end < m.pending.size() && nodes[m.pending[group_end]].byte == byte) ++group_end;
    after.clear();
    stacks.advance(below, byte, after);
    for (; !after.empty() && i < group_end; ++i) {
      const uint32_t node = m.pending[i];
      set_tokens_of(node, out);
      walk_trie(stacks, *trie_, node + 1, nodes[node].end, after,
                [&](uint32_t reached, const std::vector<uint32_t>&) { set_tokens_of(reached, out); });
    }
    i = group_end;
  }
  stacks.release(mark);
}

std::string TokenMasks::state_key(const ParseStacks& stacks, const std::vector<uint32_t>& state) const {
  std::string key;
  for (uint32_t id : state) {
    for (; id < kDone; id = stacks.frame(id).below) {
      const Frame& f = stacks.frame(id);
      key.append(reinterpret_cast<const char*>(&f.position), sizeof f.position);
      key.append(reinterpret_cast<const char*>(&f.partial), sizeof f.partial);
    }
    key.push_back('|');
  }
  return key;
}

const TokenBits& TokenMasks::allowed(ParseStacks& stacks, const std::vector<uint32_t>& state) {
  std::string key = state_key(stacks, state);
  if (const auto it = states_.find(key); it != states_.end()) return it->second;

  std::fill(scratch_.begin(), scratch_.end(), 0);
  for (const uint32_t id : state) {
    if (id == kDone) continue;
    const Frame top = stacks.frame(id);
    const TopMask& m = top_mask(top);
    if (!m.bits.empty()) {
      for (size_t w = 0; w < scratch_.size(); ++w) scratch_[w] |= m.bits[w];
    }
    for (const int32_t t : m.tokens) set_bit(scratch_, t);
    add_pending(stacks, top, m, scratch_);
  }
  if (states_.size() >= kMaxCachedStates) states_.clear();
  return states_.emplace(std::move(key), scratch_).first->second;
}

}  // namespace kiln::grammar
