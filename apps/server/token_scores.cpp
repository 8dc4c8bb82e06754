#include "apps/server/token_scores.hpp"

#include "engine/session/token_logprobs.hpp"

namespace kiln {

namespace {

std::string token_text(const Tokenizer& tok, int32_t token) {
  const std::string_view text = tok.text(token);
  return std::string(text.empty() ? tok.piece(token) : text);
}

}  // namespace

TokenScore score_token(const Tokenizer& tok, std::span<const float> logits, int32_t token, int n_top,
                       size_t text_offset) {
  const PositionLogprobs p = position_logprobs(logits, token, n_top);
  TokenScore score{{token_text(tok, token), p.chosen.logprob}, {}, true, text_offset};
  score.top.reserve(p.top.size());
  for (const TokenLogprob& t : p.top) score.top.push_back({token_text(tok, t.token), t.logprob});
  return score;
}

TokenScore unscored_token(const Tokenizer& tok, int32_t token) { return {{token_text(tok, token), 0}, {}, false, 0}; }

}  // namespace kiln
