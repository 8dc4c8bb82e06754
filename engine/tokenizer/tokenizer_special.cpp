#include "engine/tokenizer/tokenizer_special.hpp"

#include <algorithm>

namespace kiln {

SpecialTokens::SpecialTokens(const TokenTexts& pieces, const std::vector<TokenType>& types) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    const TokenType type = types[i];
    const bool user_defined = type == TokenType::UserDefined;
    if (!pieces[i].empty() && (user_defined || type == TokenType::Control || type == TokenType::Unknown)) {
      entries_.push_back({std::string(pieces[i]), static_cast<int32_t>(i), user_defined});
    }
  }
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.text.size() > b.text.size(); });
}

std::vector<TextFragment> SpecialTokens::split(std::string_view text, bool parse_special,
                                               const SpecialFilter& may_be_special) const {
  std::vector<TextFragment> fragments{{-1, text}}, next;
  for (const Entry& entry : entries_) {
    if (!entry.always && !parse_special) continue;
    next.clear();
    for (const TextFragment& fragment : fragments) {
      if (fragment.token >= 0) {
        next.push_back(fragment);
        continue;
      }
      std::string_view rest = fragment.text;
      size_t from = 0;  // where to look in `rest` (past matches the filter refused)
      for (size_t found; (found = rest.find(entry.text, from)) != std::string_view::npos;) {
        const size_t begin = static_cast<size_t>(rest.data() - text.data()) + found;
        if (!entry.always && may_be_special && !may_be_special(begin, begin + entry.text.size())) {
          from = found + 1;
          continue;
        }
        from = 0;
        if (found > 0) next.push_back({-1, rest.substr(0, found)});
        next.push_back({entry.id, rest.substr(found, entry.text.size())});
        rest.remove_prefix(found + entry.text.size());
      }
      if (!rest.empty()) next.push_back({-1, rest});
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace kiln
