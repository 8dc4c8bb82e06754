// Copies of a session's sliding-window rows at positions where prompts are
// likely to branch (the end of a system prompt that many conversations
// share), so that a prompt branching there goes on from the copy after the
// sliding-window layers' rings have moved past it, instead of being computed
// from its start. Only where the model keeps rings (Model::kv_ring_rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/memory/huge_pages.hpp"
#include "engine/model/model.hpp"

namespace kiln {

class WindowCheckpoints {
 public:
  // Checkpoints a session keeps: the newest ones; a server passes one
  // branch point per prompt.
  static constexpr size_t kMaxKept = 2;

  struct Checkpoint {
    std::vector<int32_t> tokens;  // the context before it, position by position
    int first = 0;                // its rows' first position: tokens.size() - (window - 1), or 0
    std::vector<uint8_t, LargeAllocator<uint8_t>> kv_bytes;  // positions [first, tokens.size()), as Sequence::read_kv
  };

  // Copies the window before the end of `context` (what `sequence` holds, at
  // least up to its end), unless the model keeps no rings. Replaces a
  // checkpoint of the same context; the oldest goes beyond kMaxKept.
  void take(const Sequence& sequence, std::span<const int32_t> context);

  // The longest checkpoint whose context is a prefix of `tokens` and at most
  // `limit` long; nullptr if none.
  const Checkpoint* find(std::span<const int32_t> tokens, size_t limit) const;

  // Writes `c`'s rows into `sequence`, which then can go on at c.tokens.size().
  static void restore(Sequence& sequence, const Checkpoint& c);

 private:
  std::vector<Checkpoint> kept_;  // oldest first
};

}  // namespace kiln
