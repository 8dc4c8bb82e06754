// A session's context as a value: the tokens its KV cache holds and the cache
// contents for them, tagged with the model that computed them. Snapshots, the
// prefix store and state files all carry one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/memory/huge_pages.hpp"
#include "engine/model/model.hpp"

namespace kiln {

struct SessionState {
  uint64_t fingerprint = 0;  // Model::fingerprint() of the model that computed it
  KvLayout kv;
  std::vector<int32_t> tokens;
  // tokens.size() * kv.bytes_per_position(), laid out as Sequence::read_kv
  // writes; on 2 MB pages when large (a server snapshots 23 MB for 1,000
  // tinyllama positions, and faulting them in 4 KB pages took ~100 ms).
  std::vector<uint8_t, LargeAllocator<uint8_t>> kv_bytes;
  // The first position whose rows the sliding-window layers hold (zeros
  // before it): Sequence::kv_held_from, at most tokens.size().
  int held_from = 0;

  // Memory the state occupies (what a prefix store's budget counts).
  size_t bytes() const { return tokens.size() * sizeof(int32_t) + kv_bytes.size(); }
};

// Throws kiln::Error naming the first reason `state` cannot be restored into
// `model` ("made by another model (...)"): another model, another cache layout,
// more tokens than the context, KV bytes that do not match the token count, or
// a token outside the vocabulary. Callers prefix the message with what the
// state came from.
void check_state_fits(const SessionState& state, const Model& model);

// How many leading tokens `a` and `b` share.
size_t common_prefix_length(std::span<const int32_t> a, std::span<const int32_t> b);

// How many leading tokens of `prompt` a cache that holds `tokens` (its
// sliding-window layers, of Model::sliding_window(), from held_from on) can
// go on from: the prefix they share, or none if the window before its end
// is no longer held.
size_t reusable_prefix(std::span<const int32_t> tokens, int held_from, int sliding_window,
                       std::span<const int32_t> prompt);

// "2 layers x 64 f32 (4 bytes)": a KV layout as messages print it.
std::string kv_layout_text(const KvLayout& kv);

}  // namespace kiln
