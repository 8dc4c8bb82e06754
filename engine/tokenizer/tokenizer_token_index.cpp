#include "engine/tokenizer/tokenizer_token_index.hpp"

#include <functional>

namespace kiln {

size_t TokenIndex::first_slot(std::string_view text) const {
  return std::hash<std::string_view>{}(text) & (slots_.size() - 1);
}

int32_t TokenIndex::find(std::string_view text) const {
  if (slots_.empty()) return -1;
  for (size_t slot = first_slot(text);; slot = (slot + 1) & (slots_.size() - 1)) {
    const int32_t id = slots_[slot];
    if (id < 0 || texts_[id] == text) return id;
  }
}

void TokenIndex::insert(int32_t id) {
  const std::string_view text = texts_[id];
  for (size_t slot = first_slot(text);; slot = (slot + 1) & (slots_.size() - 1)) {
    if (slots_[slot] < 0) {
      slots_[slot] = id;
      return;
    }
    if (texts_[slots_[slot]] == text) return;
  }
}

}  // namespace kiln
