#include "engine/grammar/parse_stacks.hpp"

#include <algorithm>

#include "engine/error/error.hpp"

namespace kiln::grammar {

ParseStacks::ParseStacks(const Grammar& g) : g_(g) {
  reset();
  start_ = start_state();
}

uint32_t ParseStacks::start_state() {
  std::vector<uint32_t> stacks;
  for (const uint32_t a : g_.alternatives[g_.root]) expand(frame(a, kNoFrame), stacks);
  return intern(std::move(stacks));
}

void ParseStacks::reset() {
  frames_.clear();
  frame_ids_.clear();
  states_.clear();
  state_ids_.clear();
  transitions_.clear();
  intern({});  // kDead
  ++generation_;
}

uint32_t ParseStacks::frame(uint32_t position, uint32_t below, uint32_t partial) {
  const Frame f{position, below, partial};
  const auto [it, added] = frame_ids_.emplace(f, static_cast<uint32_t>(frames_.size()));
  if (added) frames_.push_back(f);
  return it->second;
}

uint32_t ParseStacks::intern(std::vector<uint32_t> stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.size() > kMaxStacks) throw Error("grammar: too ambiguous (more than 4096 parses at once)");
  const auto [it, added] = state_ids_.emplace(stacks, static_cast<uint32_t>(states_.size()));
  if (added) {
    states_.push_back(std::move(stacks));
    transitions_.emplace_back();
    transitions_.back().fill(kUnknown);
  }
  return it->second;
}

// The stacks a frame (at any element) stands for once every rule at its top
// is expanded and every ended alternative popped: tops at character
// elements, or kDone.
void ParseStacks::expand(uint32_t first, std::vector<uint32_t>& out) {
  size_t steps = 0;
  work_.assign(1, first);
  while (!work_.empty()) {
    if (++steps > kMaxExpandSteps) throw Error("grammar: too ambiguous (a step has more than 65536 parses to expand)");
    const uint32_t id = work_.back();
    work_.pop_back();
    const Frame f = frames_[id];
    const Element e = g_.elements[f.position];
    switch (e.kind) {
      case ElementKind::Char:
        out.push_back(id);
        break;
      case ElementKind::End:
        if (f.below == kNoFrame) out.push_back(kDone);
        else work_.push_back(f.below);
        break;
      case ElementKind::Rule: {
        // Where the rule returns to. When the rule ends its alternative (a
        // tail call: repetitions are right-recursive), the return goes
        // straight to the frame below, so a repetition's stack does not grow.
        const uint32_t next = f.position + 1;
        const uint32_t back = g_.elements[next].kind == ElementKind::End ? f.below : frame(next, f.below);
        for (const uint32_t start : g_.alternatives[e.index]) work_.push_back(frame(start, back));
        break;
      }
    }
  }
}

uint32_t ParseStacks::compute_step(uint32_t state, uint8_t byte) {
  std::vector<uint32_t> next;
  for (const uint32_t id : std::vector<uint32_t>(states_[state])) {  // a copy: interning may grow states_
    if (id == kDone) continue;
    const Frame f = frames_[id];
    const CharClass& c = g_.classes[g_.elements[f.position].index];
    Utf8Partial partial;
    uint32_t cp = 0;
    switch (Utf8Partial::from_bits(f.partial).feed(byte, partial, cp)) {
      case Utf8Partial::Step::Invalid:
        break;
      case Utf8Partial::Step::Incomplete:
        if (partial.may_complete_in(c)) next.push_back(frame(f.position, f.below, partial.forget_start_in(c).bits()));
        break;
      case Utf8Partial::Step::Complete:
        if (cp == Utf8Partial::kAnyCodepoint || c.contains(cp)) expand(frame(f.position + 1, f.below), next);
        break;
    }
  }
  const uint32_t result = intern(std::move(next));
  transitions_[state][byte] = result;
  return result;
}

bool ParseStacks::can_end(uint32_t state) const {
  const std::vector<uint32_t>& s = states_[state];
  return !s.empty() && s.back() == kDone;  // sorted: kDone is above every frame id
}

bool ParseStacks::is_finished(uint32_t state) const {
  const std::vector<uint32_t>& s = states_[state];
  return s.size() == 1 && s[0] == kDone;
}

// Iterative: a stack can be as deep as the text is long.
uint32_t ParseStacks::copy_frame(const std::vector<Frame>& from, uint32_t id) {
  std::vector<uint32_t> chain;
  for (; id < kDone; id = from[id].below) chain.push_back(id);
  uint32_t copy = id;  // kNoFrame, or kDone for a finished stack
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) copy = frame(from[*it].position, copy, from[*it].partial);
  return copy;
}

uint32_t ParseStacks::compact(uint32_t keep) {
  const std::vector<Frame> old_frames = std::move(frames_);
  const std::vector<uint32_t> old_stacks = states_[keep];
  reset();
  std::vector<uint32_t> stacks;
  for (const uint32_t id : old_stacks) stacks.push_back(copy_frame(old_frames, id));
  const uint32_t kept = intern(std::move(stacks));
  start_ = start_state();
  return kept;
}

}  // namespace kiln::grammar
