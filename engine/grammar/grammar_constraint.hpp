// Constrained decoding for a sampler: which tokens a grammar allows next,
// as a mask over the logits, and the grammar's progress as tokens are
// chosen. The mask is applied before sampling, so temperature, top-k/p and
// the seed act on the allowed tokens as they would on all of them.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/grammar/grammar.hpp"
#include "engine/grammar/matcher.hpp"
#include "engine/grammar/token_masks.hpp"
#include "engine/grammar/token_trie.hpp"
#include "engine/session/sampler.hpp"

namespace kiln::grammar {

class GrammarConstraint final : public TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> vocab);

  // Sets the logit (n_vocab values) of every token the grammar does not
  // allow next to -infinity. End-of-generation tokens are allowed only where
  // the grammar may end. Throws kiln::Error if it allows no token at all.
  void mask(float* logits) override;
  // The allowed tokens as bits (what mask() keeps).
  const TokenBits& allowed();
  // Reads a chosen token. Throws kiln::Error if the grammar does not allow it.
  void accept(int32_t token) override;
  // Reads text generated before the constraint began (a grammar that starts
  // at a marker the model wrote): false, having read nothing, if the grammar
  // does not allow all of it.
  bool accept_text(std::string_view bytes) { return matcher_.accept(bytes); }

  // An end-of-generation token may come now.
  bool can_end() const { return matcher_.can_end(); }
  // Nothing else may: the generation should stop here.
  bool is_finished() const override { return ended_ || matcher_.is_finished(); }

 private:
  std::shared_ptr<const TokenTrie> vocab_;
  Matcher matcher_;
  TokenMasks masks_;
  TokenBits allowed_;
  bool ended_ = false;  // an end-of-generation token was accepted
};

}  // namespace kiln::grammar
