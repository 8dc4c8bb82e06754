#include "engine/session/prefix_store.hpp"

#include <algorithm>

namespace kiln {

namespace {

bool starts_with(std::span<const int32_t> tokens, std::span<const int32_t> prefix) {
  return prefix.size() <= tokens.size() && common_prefix_length(tokens, prefix) == prefix.size();
}

}  // namespace

bool PrefixStore::put(SessionState state) {
  if (state.tokens.empty() || state.bytes() > budget_bytes_) return false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->fingerprint == state.fingerprint && starts_with(it->tokens, state.tokens)) {
      entries_.splice(entries_.begin(), entries_, it);
      return true;
    }
    if (it->fingerprint == state.fingerprint && starts_with(state.tokens, it->tokens)) {
      bytes_used_ -= it->bytes();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  bytes_used_ += state.bytes();
  entries_.push_front(std::move(state));
  while (bytes_used_ > budget_bytes_) {
    bytes_used_ -= entries_.back().bytes();
    entries_.pop_back();
  }
  return true;
}

PrefixStore::Match PrefixStore::find(uint64_t fingerprint, std::span<const int32_t> prompt, int sliding_window) {
  auto best = entries_.end();
  size_t best_length = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->fingerprint != fingerprint) continue;
    const size_t length = reusable_prefix(it->tokens, it->held_from, sliding_window, prompt);
    if (length > best_length) {  // strictly longer: ties go to the more recently used
      best = it;
      best_length = length;
    }
  }
  if (best == entries_.end()) return {};
  entries_.splice(entries_.begin(), entries_, best);
  return {&entries_.front(), best_length};
}

size_t PrefixStore::seed(Session& session, std::span<const int32_t> prompt) {
  const size_t own = session.reusable_prefix(prompt);
  const Match match = find(session.model().fingerprint(), prompt, session.model().sliding_window());
  if (match.length <= own) return own;
  return session.restore_prefix(*match.state, prompt);
}

bool PrefixStore::contains(std::span<const int32_t> tokens) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const SessionState& s) { return std::ranges::equal(s.tokens, tokens); });
}

}  // namespace kiln
