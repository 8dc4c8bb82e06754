#include "engine/session/window_checkpoints.hpp"

#include <algorithm>

namespace kiln {

void WindowCheckpoints::take(const Sequence& sequence, std::span<const int32_t> context) {
  const Model& model = sequence.model();
  const int end = static_cast<int>(context.size());
  if (model.kv_ring_rows() == 0 || end == 0) return;
  Checkpoint c;
  c.tokens.assign(context.begin(), context.end());
  c.first = std::max(0, end - (model.sliding_window() - 1));
  c.kv_bytes.resize(size_t(end - c.first) * model.kv_layout().bytes_per_position());
  sequence.read_kv(c.first, end - c.first, c.kv_bytes.data());
  std::erase_if(kept_, [&](const Checkpoint& k) { return k.tokens == c.tokens; });
  if (kept_.size() == kMaxKept) kept_.erase(kept_.begin());
  kept_.push_back(std::move(c));
}

const WindowCheckpoints::Checkpoint* WindowCheckpoints::find(std::span<const int32_t> tokens, size_t limit) const {
  const Checkpoint* best = nullptr;
  for (const Checkpoint& c : kept_)
    if (c.tokens.size() <= std::min(limit, tokens.size()) && std::ranges::equal(c.tokens, tokens.first(c.tokens.size())) &&
        (!best || c.tokens.size() > best->tokens.size()))
      best = &c;
  return best;
}

void WindowCheckpoints::restore(Sequence& sequence, const Checkpoint& c) {
  const int end = static_cast<int>(c.tokens.size());
  sequence.write_kv(c.first, end - c.first, c.kv_bytes.data(), c.first);
}

}  // namespace kiln
