// The matcher's pushdown automaton, made deterministic as it runs.
//
// A parse in progress is a stack of frames: the top frame's position is the
// character element to match next, the frames below hold where each
// enclosing rule goes on once the rule above it ends. Frames are interned
// (one id per position, frame below and partial character), so equal stacks
// are equal ids and stacks share their bottoms. A state is the sorted set of
// its stacks' top frames, interned too, and the state that follows a state
// and a byte is computed once and then looked up: walking a vocabulary's
// trie costs a table lookup per node, and states recur (every character
// inside a JSON string leads back to the same state).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.hpp"

namespace kiln::grammar {

// No frame: below the bottom frame.
inline constexpr uint32_t kNoFrame = UINT32_MAX;
// In a state: a stack whose bottom frame has ended, so the text may end here.
inline constexpr uint32_t kDone = UINT32_MAX - 1;

struct Frame {
  uint32_t position;  // an element of the grammar
  uint32_t below;     // the frame under this one, or kNoFrame
  uint32_t partial;   // Utf8Partial bits: the character being read at `position`
};

class ParseStacks {
 public:
  // The state with no stack: the text so far is not in the grammar.
  static constexpr uint32_t kDead = 0;

  explicit ParseStacks(const Grammar& g);

  uint32_t start() const { return start_; }
  // The state after one more byte (kDead if the byte cannot come here).
  uint32_t step(uint32_t state, uint8_t byte) {
    const uint32_t next = transitions_[state][byte];
    return next != kUnknown ? next : compute_step(state, byte);
  }
  bool can_end(uint32_t state) const;
  bool is_finished(uint32_t state) const;  // nothing but the end can follow

  // Interned states accumulate as the text and the masks explore; past a
  // bound the owner calls compact() with the one state it still needs,
  // which drops every other and returns that state's new id. Ids of an
  // earlier generation() are invalid.
  bool should_compact() const { return states_.size() > kMaxStates; }
  uint32_t compact(uint32_t keep);
  uint64_t generation() const { return generation_; }

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  static constexpr size_t kMaxStates = 1 << 14;

  struct FrameHash {
    size_t operator()(const Frame& f) const {
      return (uint64_t{f.position} * 0x9E3779B97F4A7C15ULL) ^ (uint64_t{f.below} * 0xC2B2AE3D27D4EB4FULL) ^ f.partial;
    }
  };
  struct FrameEqual {
    bool operator()(const Frame& a, const Frame& b) const {
      return a.position == b.position && a.below == b.below && a.partial == b.partial;
    }
  };
  struct StacksHash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = v.size();
      for (const uint32_t x : v) h = (h ^ x) * 0x100000001B3ULL;
      return h;
    }
  };

  uint32_t frame(uint32_t position, uint32_t below, uint32_t partial = 0);
  void expand(uint32_t frame, std::vector<uint32_t>& out);
  uint32_t intern(std::vector<uint32_t> stacks);
  uint32_t compute_step(uint32_t state, uint8_t byte);
  uint32_t copy_frame(const std::vector<Frame>& from, uint32_t id);
  uint32_t start_state();
  void reset();

  const Grammar& g_;
  std::vector<Frame> frames_;
  std::unordered_map<Frame, uint32_t, FrameHash, FrameEqual> frame_ids_;
  std::vector<std::vector<uint32_t>> states_;  // per state: its stacks' top frames (or kDone), sorted
  std::unordered_map<std::vector<uint32_t>, uint32_t, StacksHash> state_ids_;
  // [state][byte]; a deque, so that a new state does not move the others.
  std::deque<std::array<uint32_t, 256>> transitions_;
  std::vector<uint32_t> work_;         // expand()'s frames still to expand
  uint32_t start_ = kDead;
  uint64_t generation_ = 0;
};

// Parses hostile grammars could make unbounded (a highly ambiguous grammar
// multiplies its stacks) stop with kiln::Error past these.
inline constexpr size_t kMaxExpandSteps = 1 << 16;
inline constexpr size_t kMaxStacks = 1 << 12;

}  // namespace kiln::grammar
