// Log-probabilities of tokens under the model's distribution at a position:
// the log-softmax of the raw logits, before any penalty, mask or
// temperature, as OpenAI's `logprobs` report them (what a sampler then does
// with the distribution does not change the scores).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;  // <= 0
};

struct PositionLogprobs {
  TokenLogprob chosen;            // the token that came at this position
  std::vector<TokenLogprob> top;  // the n_top likeliest tokens, likeliest first (of equals, the lower id)
};

// `chosen`'s log-probability and the n_top likeliest tokens' in `logits`
// (one row, n_vocab floats). The sum is taken in double, from the largest
// logit, so it neither overflows nor loses small terms.
PositionLogprobs position_logprobs(std::span<const float> logits, int32_t chosen, int n_top);

}  // namespace kiln
