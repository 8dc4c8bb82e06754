#include "engine/grammar/matcher.hpp"

#include <algorithm>

namespace kiln::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> g) : grammar_(std::move(g)), stacks_(*grammar_) {
  state_ = stacks_.start();
}

bool Matcher::accept(std::string_view bytes) {
  const size_t mark = stacks_.mark();
  std::vector<uint32_t> state = state_;
  for (const char b : bytes) {
    next_.clear();
    stacks_.advance(state, static_cast<uint8_t>(b), next_);
    if (next_.empty()) {
      stacks_.release(mark);
      return false;
    }
    state.swap(next_);
  }
  state_ = std::move(state);
  return true;
}

bool Matcher::can_end() const { return std::find(state_.begin(), state_.end(), kDone) != state_.end(); }

bool Matcher::is_finished() const { return state_.size() == 1 && state_[0] == kDone; }

}  // namespace kiln::grammar
