// Perplexity the way llama.cpp's llama-perplexity computes it by default, so
// the two tools' numbers can be set side by side: the text is cut into chunks
// of the evaluation context, each chunk runs from position 0 with BOS in place
// of its first token, and only its second half is scored (every scored token
// then has at least half a context before it).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model.hpp"

namespace kiln {

// The scored tokens' negative log-likelihoods, summed.
struct NllStats {
  double sum = 0;
  double sum_squares = 0;
  int64_t count = 0;

  void add(double nll);
  // exp(mean negative log-likelihood).
  double perplexity() const;
  // llama.cpp's "+/-": the standard error of the mean log-likelihood (sample
  // variance / (count - 1)), carried through exp to first order, i.e. times
  // the perplexity. NaN when it cannot be estimated (fewer than two tokens, or
  // no spread).
  double uncertainty() const;
};

// -log of the softmax of `logits` at `target`, computed without overflow
// (the largest logit taken out) and with the sum of exponentials in double.
double token_nll(const float* logits, int n_vocab, int32_t target);

// How many tokens a chunk of n_ctx scores: the predictions made at positions
// n_ctx/2 .. n_ctx-2 (the last position's prediction has no token to check).
int scored_per_chunk(int n_ctx);

// Runs one chunk on `sequence` (chunk.size() is the evaluation context, at most the model's)
// from position 0, in forward calls of at most max_batch tokens, and adds the
// negative log-likelihood of each scored token to `stats`. The first token
// becomes BOS when the vocabulary adds BOS, as llama-perplexity does; the
// first half is run for its keys and values only (no logits).
void score_chunk(Sequence& sequence, std::vector<int32_t> chunk, NllStats& stats);

}  // namespace kiln
