#include "apps/server/reasoning_budget.hpp"

#include <utility>

#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

// As llama.cpp looks at the token's own bytes.
bool ends_inside_character(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const Utf8Unit unit = next_utf8_unit(text.substr(at));
    if (unit.status == Utf8Status::Truncated) return true;
    at += unit.length;
  }
  return false;
}

}  // namespace

ReasoningBudget::ReasoningBudget(int budget, std::vector<int32_t> forced, bool starts_inside)
    : budget_(budget), forced_(std::move(forced)), forcing_(starts_inside && budget == 0) {}

std::optional<int32_t> ReasoningBudget::forced_token() const {
  if (forcing_ && next_ < forced_.size()) return forced_[next_];
  return std::nullopt;
}

void ReasoningBudget::counted(bool was_inside, bool inside, std::string_view token_text) {
  if (forcing_) {  // until the forced text ends the block (a call's marker in the message may end it first)
    next_ = inside ? next_ + 1 : forced_.size();
    return;
  }
  // The token that opened the block is not its content; the one that closed it ends the count.
  if (was_inside && inside) ++used_;
  forcing_ = inside && used_ >= budget_ && !ends_inside_character(token_text);
}

}  // namespace kiln
