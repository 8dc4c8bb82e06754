#include "engine/session/token_logprobs.hpp"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// log(sum(exp(logits))).
double log_sum_exp(std::span<const float> logits) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(double(l) - double(max_logit));
  return double(max_logit) + std::log(sum);
}

bool likelier(const TokenLogprob& a, const TokenLogprob& b) {
  return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
}

}  // namespace

PositionLogprobs position_logprobs(std::span<const float> logits, int32_t chosen, int n_top) {
  const double normalizer = log_sum_exp(logits);
  const auto logprob = [&](int32_t id) {
    // At most 0: rounding must not make a certain token's log-probability positive.
    return TokenLogprob{id, static_cast<float>(std::min(0.0, double(logits[size_t(id)]) - normalizer))};
  };
  PositionLogprobs out;
  out.chosen = logprob(chosen);
  const size_t n = std::min(size_t(std::max(n_top, 0)), logits.size());
  if (n == 0) return out;
  // One pass keeping the n best in order: n is small (OpenAI's 20 at most),
  // the vocabulary large.
  out.top.reserve(n + 1);
  for (int32_t id = 0; id < static_cast<int32_t>(logits.size()); ++id) {
    if (out.top.size() == n && logits[size_t(id)] <= logits[size_t(out.top.back().token)]) continue;
    const TokenLogprob candidate = logprob(id);
    out.top.insert(std::upper_bound(out.top.begin(), out.top.end(), candidate, likelier), candidate);
    if (out.top.size() > n) out.top.pop_back();
  }
  return out;
}

}  // namespace kiln
