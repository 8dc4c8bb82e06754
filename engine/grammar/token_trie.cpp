#include "engine/grammar/token_trie.hpp"

#include <algorithm>

#include "engine/error/error.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace kiln::grammar {

// Tokens sorted by their bytes come in depth-first order: each adds the
// nodes of its bytes past the prefix it shares with the one before, and
// ends the subtrees of the previous token's nodes past that prefix.
TokenTrie::TokenTrie(const std::vector<std::string_view>& texts, std::vector<int32_t> end_of_generation)
    : next_same_(texts.size(), -1),
      end_of_generation_(std::move(end_of_generation)) {
  for (const std::string_view text : texts) texts_.push_back(text);
  std::vector<int32_t> order;
  for (int32_t id = 0; id < static_cast<int32_t>(texts.size()); ++id) {
    const bool ends = std::find(end_of_generation_.begin(), end_of_generation_.end(), id) != end_of_generation_.end();
    if (!ends) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return texts[a] < texts[b]; });
  nodes_.push_back(Node{0, -1, 0, 0});
  std::vector<uint32_t> path{0};  // the nodes of the previous token's bytes, root first
  std::string_view previous;
  for (const int32_t id : order) {
    const std::string_view text = texts[id];
    if (text.empty()) continue;
    if (text.size() > UINT16_MAX) throw Error("a token of more than 65535 bytes");
    size_t shared = 0;
    while (shared < previous.size() && shared < text.size() && previous[shared] == text[shared]) ++shared;
    for (size_t d = path.size() - 1; d > shared; --d) nodes_[path[d]].end = static_cast<uint32_t>(nodes_.size());
    path.resize(shared + 1);
    for (size_t d = shared; d < text.size(); ++d) {
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(Node{0, -1, static_cast<uint16_t>(d + 1), static_cast<uint8_t>(text[d])});
    }
    Node& last = nodes_[path.back()];
    if (last.token < 0) {
      last.token = id;
    } else {
      int32_t t = last.token;  // the same bytes as an earlier token: chain it
      while (next_same_[t] >= 0) t = next_same_[t];
      next_same_[t] = id;
    }
    previous = text;
  }
  for (const uint32_t n : path) nodes_[n].end = static_cast<uint32_t>(nodes_.size());
}

TokenTrie TokenTrie::from_tokenizer(const Tokenizer& tok, std::span<const int32_t> kept) {
  std::vector<std::string_view> texts(static_cast<size_t>(tok.n_vocab()));
  std::vector<int32_t> end_of_generation;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.is_end_of_generation(id)) end_of_generation.push_back(id);
    texts[id] = tok.text(id);
  }
  for (int32_t id : kept) texts[id] = tok.piece(id);
  return TokenTrie(texts, std::move(end_of_generation));
}

}  // namespace kiln::grammar
