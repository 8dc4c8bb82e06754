#include "engine/grammar/grammar_constraint.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "engine/error/error.hpp"

namespace kiln::grammar {

namespace {

bool is_end_of_generation(const TokenTrie& vocab, int32_t token) {
  const std::vector<int32_t>& eog = vocab.end_of_generation();
  return std::find(eog.begin(), eog.end(), token) != eog.end();
}

}  // namespace

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> vocab)
    : vocab_(vocab), matcher_(std::move(g)), masks_(std::move(vocab)) {}

const TokenBits& GrammarConstraint::allowed() {
  allowed_ = ended_ ? TokenBits((static_cast<size_t>(vocab_->n_vocab()) + 63) / 64, 0)
                    : masks_.allowed(matcher_.stacks(), matcher_.state());
  if (can_end() && !ended_) {
    for (const int32_t t : vocab_->end_of_generation()) allowed_[static_cast<size_t>(t) / 64] |= uint64_t{1} << (t % 64);
  }
  return allowed_;
}

void GrammarConstraint::mask(float* logits) {
  const TokenBits& bits = allowed();
  const int n = vocab_->n_vocab();
  bool any = false;
  for (int w = 0; w * 64 < n; ++w) {
    const uint64_t word = bits[static_cast<size_t>(w)];
    any = any || word != 0;
    if (word == ~uint64_t{0}) continue;
    const int end = std::min(n, w * 64 + 64);
    if (word == 0) {  // most words, where few tokens are allowed
      std::fill(logits + w * 64, logits + end, -std::numeric_limits<float>::infinity());
      continue;
    }
    for (int i = w * 64; i < end; ++i) {
      if (!(word >> (i % 64) & 1)) logits[i] = -std::numeric_limits<float>::infinity();
    }
  }
  if (!any) throw Error("grammar: no token can continue the text here");
}

void GrammarConstraint::accept(int32_t token) {
  if (token < 0 || token >= vocab_->n_vocab()) throw Error("grammar: token id " + std::to_string(token) + " is out of range");
  if (!ended_ && is_end_of_generation(*vocab_, token) && can_end()) {
    ended_ = true;
    return;
  }
  const std::string_view text = vocab_->text(token);
  if (ended_ || text.empty() || !matcher_.accept(text))
    throw Error("grammar: token " + std::to_string(token) + " is not allowed here");
}

}  // namespace kiln::grammar
