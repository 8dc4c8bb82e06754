// Token ids by their text. Vocabularies have up to a few hundred thousand
// tokens and loading looks up every merge's three tokens, so this is a flat
// open-addressing table over one buffer of all the texts, not a node-based
// std::unordered_map of strings (which made loading several times slower).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/token_texts.hpp"

namespace kiln {

class TokenIndex {
 public:
  TokenIndex() = default;

  // Indexes texts[id] for every id with keep(id); when texts repeat, the
  // lowest id wins.
  template <typename Keep>
  TokenIndex(const TokenTexts& texts, Keep keep) : texts_(texts) {
    size_t n_slots = 16;
    while (n_slots < 2 * texts.size()) n_slots *= 2;
    slots_.assign(n_slots, -1);
    for (size_t id = 0; id < texts.size(); ++id) {
      if (keep(id)) insert(static_cast<int32_t>(id));
    }
  }

  // The id of `text`, or -1.
  int32_t find(std::string_view text) const;

 private:
  size_t first_slot(std::string_view text) const;
  void insert(int32_t id);

  TokenTexts texts_;            // every text, indexed or not, by id
  std::vector<int32_t> slots_;  // ids, -1 for empty; a power of two, at most half full
};

}  // namespace kiln
