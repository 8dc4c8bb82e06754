// The tokens of an answer as `logprobs` report them: each token's text, its
// log-probability under the model (engine/session/token_logprobs.hpp), the
// likeliest tokens at its position, and where its text starts in the answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace kiln {

struct ScoredText {
  std::string text;  // the bytes the token stands for (a control token: its piece, "<s>")
  float logprob = 0;
};

struct TokenScore {
  ScoredText token;
  std::vector<ScoredText> top;  // likeliest first
  bool scored = true;           // false: a prompt's first token, which nothing predicts (logprob null)
  size_t text_offset = 0;       // bytes of the answer's text (an echoed prompt included) before this token's
};

// `token`, which came after the position whose logits these are, with the
// n_top likeliest tokens there.
TokenScore score_token(const Tokenizer& tok, std::span<const float> logits, int32_t token, int n_top,
                       size_t text_offset);
// A prompt's first token: no logits predict it.
TokenScore unscored_token(const Tokenizer& tok, int32_t token);

}  // namespace kiln
