#include "engine/grammar/matcher.hpp"

namespace kiln::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> g)
    : grammar_(std::move(g)), stacks_(*grammar_), state_(stacks_.start()) {}

bool Matcher::allows(std::string_view bytes) const {
  uint32_t state = state_;
  for (const char b : bytes) {
    state = stacks_.step(state, static_cast<uint8_t>(b));
    if (state == ParseStacks::kDead) return false;
  }
  return true;
}

bool Matcher::accept(std::string_view bytes) {
  uint32_t state = state_;
  for (const char b : bytes) {
    state = stacks_.step(state, static_cast<uint8_t>(b));
    if (state == ParseStacks::kDead) return false;
  }
  state_ = state;
  if (stacks_.should_compact()) state_ = stacks_.compact(state_);
  return true;
}

}  // namespace kiln::grammar
