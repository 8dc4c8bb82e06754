// The KV state of recently used prompt prefixes, for a process that serves
// many prompts: a session about to take a prompt is first seeded with the
// longest stored prefix of it, so only the rest is computed.
#pragma once

#include <cstdint>
#include <list>
#include <span>

#include "engine/session/session.hpp"
#include "engine/session/session_state.hpp"

namespace kiln {

// Not thread-safe: a server shares one store between sessions under a lock.
class PrefixStore {
 public:
  // budget_bytes bounds the sum of SessionState::bytes() over the entries.
  explicit PrefixStore(size_t budget_bytes) : budget_bytes_(budget_bytes) {}

  // Adds `state` as the most recently used entry, then evicts least recently
  // used entries until the store is within its budget. An entry whose tokens
  // are a prefix of the new state's (or equal) is dropped, since the new one
  // serves every prompt it did; a state that is itself a prefix of an entry is
  // not stored, and that entry becomes the most recently used. Returns false,
  // changing nothing, if `state` is empty or alone exceeds the budget.
  bool put(SessionState state);

  struct Match {
    const SessionState* state = nullptr;  // nullptr: no entry shares a token with the prompt
    size_t length = 0;                    // tokens the entry shares with the prompt
  };
  // The entry made by the model with `fingerprint` that shares the longest
  // prefix with `prompt` (of equally long ones, the most recently used),
  // which becomes the most recently used entry. Valid until the next put.
  // A model with sliding-window layers counts only the prefixes an entry can
  // go on from (reusable_prefix).
  Match find(uint64_t fingerprint, std::span<const int32_t> prompt, int sliding_window = 0);

  // Gives `session` the longest prefix of `prompt` available: the best entry
  // is restored into it (Session::restore_prefix) if it shares more of the
  // prompt than the session's own context does. Returns how many leading
  // prompt tokens the session then holds; Session::ingest_prompt computes
  // the rest.
  size_t seed(Session& session, std::span<const int32_t> prompt);

  bool contains(std::span<const int32_t> tokens) const;
  size_t size() const { return entries_.size(); }
  size_t bytes_used() const { return bytes_used_; }
  size_t budget_bytes() const { return budget_bytes_; }

 private:
  std::list<SessionState> entries_;  // most recently used first
  size_t bytes_used_ = 0;
  size_t budget_bytes_;
};

}  // namespace kiln
