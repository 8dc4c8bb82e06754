#include "engine/session/session_state.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/error/error.hpp"

namespace kiln {

namespace {

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

void check_state_fits(const SessionState& state, const Model& model) {
  const uint64_t fingerprint = model.fingerprint();
  if (state.fingerprint != fingerprint)
    throw Error("made by another model (fingerprint " + hex(state.fingerprint) + ", this model is " +
                hex(fingerprint) + ")");
  const KvLayout kv = model.kv_layout();
  if (!(state.kv == kv))
    throw Error("KV cache layout is " + kv_layout_text(state.kv) + ", this model's is " + kv_layout_text(kv));
  if (state.tokens.size() > static_cast<size_t>(model.n_ctx()))
    throw Error("holds " + std::to_string(state.tokens.size()) + " tokens, more than the context of " +
                std::to_string(model.n_ctx()));
  if (state.kv_bytes.size() != state.tokens.size() * kv.bytes_per_position())
    throw Error(std::to_string(state.kv_bytes.size()) + " KV bytes for " +
                std::to_string(state.tokens.size()) + " tokens, expected " +
                std::to_string(state.tokens.size() * kv.bytes_per_position()));
  if (state.held_from < 0 || static_cast<size_t>(state.held_from) > state.tokens.size())
    throw Error("its sliding-window layers start at position " + std::to_string(state.held_from) + ", past its " +
                std::to_string(state.tokens.size()) + " tokens");
  for (size_t i = 0; i < state.tokens.size(); ++i)
    if (state.tokens[i] < 0 || state.tokens[i] >= model.n_vocab())
      throw Error("token " + std::to_string(i) + " has id " + std::to_string(state.tokens[i]) +
                  ", outside the vocabulary (0.." + std::to_string(model.n_vocab() - 1) + ")");
}

size_t common_prefix_length(std::span<const int32_t> a, std::span<const int32_t> b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

size_t reusable_prefix(std::span<const int32_t> tokens, int held_from, int sliding_window,
                       std::span<const int32_t> prompt) {
  const size_t shared = common_prefix_length(tokens, prompt);
  return kv_continues_at(sliding_window, held_from, static_cast<int>(shared)) ? shared : 0;
}

std::string kv_layout_text(const KvLayout& kv) {
  return std::to_string(kv.n_layer) + " layers x " + std::to_string(kv.kv_dim) + " " + kv.type + " (" +
         std::to_string(kv.bytes_per_value) + " bytes)";
}

}  // namespace kiln
