#include "engine/grammar/parse_stacks.hpp"

#include "engine/error.hpp"

namespace kiln::grammar {

uint32_t ParseStacks::make(uint32_t position, uint32_t below, uint32_t partial) {
  frames_.push_back(Frame{position, below, partial});
  return static_cast<uint32_t>(frames_.size() - 1);
}

void ParseStacks::expand(uint32_t frame, std::vector<uint32_t>& out) {
  const size_t from = out.size();
  size_t steps = 0;
  work_.assign(1, frame);
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
        const uint32_t back = g_.elements[next].kind == ElementKind::End ? f.below : make(next, f.below);
        for (const uint32_t start : g_.alternatives[e.index]) work_.push_back(make(start, back));
        break;
      }
    }
  }
  remove_duplicates(out, from);
}

void ParseStacks::advance(const std::vector<uint32_t>& state, uint8_t byte, std::vector<uint32_t>& out) {
  for (const uint32_t id : state) {
    if (id == kDone) continue;
    const Frame f = frames_[id];
    const CharClass& c = g_.classes[g_.elements[f.position].index];
    Utf8Partial next;
    uint32_t cp = 0;
    switch (Utf8Partial::from_bits(f.partial).feed(byte, next, cp)) {
      case Utf8Partial::Step::Invalid:
        break;
      case Utf8Partial::Step::Incomplete:
        if (next.may_complete_in(c)) out.push_back(make(f.position, f.below, next.bits()));
        break;
      case Utf8Partial::Step::Complete:
        if (c.contains(cp)) expand(make(f.position + 1, f.below), out);
        break;
    }
  }
  remove_duplicates(out, 0);
  if (out.size() > kMaxStacks) throw Error("grammar: too ambiguous (more than 4096 parses at once)");
}

std::vector<uint32_t> ParseStacks::start() {
  std::vector<uint32_t> state;
  for (const uint32_t a : g_.alternatives[g_.root]) expand(make(a, kNoFrame), state);
  remove_duplicates(state, 0);
  return state;
}

bool ParseStacks::same(uint32_t a, uint32_t b) const {
  while (a != b) {
    if (a >= kDone || b >= kDone) return false;  // kDone and kNoFrame equal only themselves
    const Frame& x = frames_[a];
    const Frame& y = frames_[b];
    if (x.position != y.position || x.partial != y.partial) return false;
    a = x.below;
    b = y.below;
  }
  return true;
}

void ParseStacks::remove_duplicates(std::vector<uint32_t>& stacks, size_t from) const {
  size_t kept = from;
  for (size_t i = from; i < stacks.size(); ++i) {
    bool seen = false;
    for (size_t j = from; j < kept && !seen; ++j) seen = same(stacks[j], stacks[i]);
    if (!seen) stacks[kept++] = stacks[i];
  }
  stacks.resize(kept);
}

}  // namespace kiln::grammar
