#include "apps/perplexity_score.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

void NllStats::add(double nll) {
  sum += nll;
  sum_squares += nll * nll;
  ++count;
}

double NllStats::perplexity() const { return std::exp(sum / static_cast<double>(count)); }

double NllStats::uncertainty() const {
  const double n = static_cast<double>(count);
  const double mean = sum / n;
  const double variance = sum_squares / n - mean * mean;
  if (count < 2 || !(variance > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::sqrt(variance / (n - 1)) * perplexity();
}

double token_nll(const float* logits, int n_vocab, int32_t target) {
  const float max_logit = *std::max_element(logits, logits + n_vocab);
  double sum_exp = 0;
  for (int i = 0; i < n_vocab; ++i) sum_exp += std::exp(double(logits[i]) - double(max_logit));
  return std::log(sum_exp) - (double(logits[target]) - double(max_logit));
}

int scored_per_chunk(int n_ctx) { return n_ctx - n_ctx / 2 - 1; }

void score_chunk(Sequence& sequence, std::vector<int32_t> chunk, NllStats& stats) {
  const Model& model = sequence.model();
  const int n_ctx = static_cast<int>(chunk.size());
  const int first_scored = n_ctx / 2;
  const int n_vocab = model.n_vocab();
  const int max_batch = model.max_batch();
  if (model.tokenizer().adds_bos()) chunk[0] = model.tokenizer().bos();

  for (int pos = 0; pos < first_scored;) {
    const int n = std::min(max_batch, first_scored - pos);
    sequence.forward(chunk.data() + pos, n, pos, Logits::None, nullptr);
    pos += n;
  }
  // The logits at position p predict the token at p + 1; each forward call's
  // are scored before the next call reuses the buffer.
  std::vector<float> logits(static_cast<size_t>(max_batch) * static_cast<size_t>(n_vocab));
  for (int pos = first_scored; pos < n_ctx;) {
    const int n = std::min(max_batch, n_ctx - pos);
    sequence.forward(chunk.data() + pos, n, pos, Logits::All, logits.data());
    for (int i = 0; i < n && pos + i + 1 < n_ctx; ++i)
      stats.add(token_nll(logits.data() + static_cast<size_t>(i) * static_cast<size_t>(n_vocab), n_vocab,
                          chunk[static_cast<size_t>(pos + i + 1)]));
    pos += n;
  }
}

}  // namespace kiln
