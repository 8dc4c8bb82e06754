// The matcher's pushdown automaton. A parse in progress is a stack of
// frames: the top frame's position is the character element to match next,
// the frames below hold where each enclosing rule goes on once the rule
// above it ends. Frames live in an arena and point to the frame below, so
// the stacks of an ambiguous parse share their common bottom and a step
// copies nothing. A state is the list of the stacks' top frames.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/grammar/grammar.hpp"

namespace kiln::grammar {

// No frame: below the bottom frame.
inline constexpr uint32_t kNoFrame = UINT32_MAX;
// A stack whose bottom frame has ended: in a state, the grammar may end here.
inline constexpr uint32_t kDone = UINT32_MAX - 1;

struct Frame {
  uint32_t position;  // an element of the grammar
  uint32_t below;     // the frame under this one, or kNoFrame
  uint32_t partial;   // Utf8Partial bits: the character being read at `position`
};

class ParseStacks {
 public:
  explicit ParseStacks(const Grammar& g) : g_(g) {}

  const Grammar& grammar() const { return g_; }
  const Frame& frame(uint32_t id) const { return frames_[id]; }
  uint32_t make(uint32_t position, uint32_t below, uint32_t partial = 0);

  // Appends the stacks that a frame (at any element) stands for once every
  // rule at its top is expanded and every ended alternative popped: tops at
  // character elements, or kDone. Duplicates are removed from the whole of
  // `out` past `from`.
  void expand(uint32_t frame, std::vector<uint32_t>& out);
  // Appends the stacks that follow `state` after one more byte.
  void advance(const std::vector<uint32_t>& state, uint8_t byte, std::vector<uint32_t>& out);
  // The state at the start of the grammar.
  std::vector<uint32_t> start();

  // Whether two stacks match the same way (same positions and partial
  // characters all the way down).
  bool same(uint32_t a, uint32_t b) const;

  // Frames made after mark() can be dropped with release(), once no state
  // refers to them.
  size_t mark() const { return frames_.size(); }
  void release(size_t mark) { frames_.resize(mark); }

 private:
  void remove_duplicates(std::vector<uint32_t>& stacks, size_t from) const;

  const Grammar& g_;
  std::vector<Frame> frames_;
  std::vector<uint32_t> work_;  // expand()'s frames still to expand
};

// Parses hostile grammars could make unbounded (a highly ambiguous grammar
// multiplies its stacks) stop with kiln::Error past these.
inline constexpr size_t kMaxExpandSteps = 1 << 16;
inline constexpr size_t kMaxStacks = 1 << 12;

}  // namespace kiln::grammar
