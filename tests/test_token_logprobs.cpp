// Log-probabilities of a row of logits (engine/session/token_logprobs.hpp):
// the log-softmax, the likeliest tokens in order (ties: the lower id), and
// no overflow for large logits.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/session/token_logprobs.hpp"

using kiln::position_logprobs;

TEST_CASE("a token's logprob is its logit's log-softmax; the top list is sorted, ties to the lower id") {
  const std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l));
  const auto p = position_logprobs(logits, 2, 3);
  CHECK(p.chosen.token == 2);
  CHECK(p.chosen.logprob == doctest::Approx(2.0 - std::log(sum)));
  REQUIRE(p.top.size() == 3);
  CHECK(p.top[0].token == 1);
  CHECK(p.top[1].token == 3);
  CHECK(p.top[2].token == 2);
  CHECK(p.top[0].logprob == p.top[1].logprob);
  CHECK(p.top[2].logprob == p.chosen.logprob);
  CHECK(position_logprobs(logits, 0, 0).top.empty());
  CHECK(position_logprobs(logits, 0, 20).top.size() == logits.size());  // no more than the vocabulary
  double total = 0;
  for (const auto& t : position_logprobs(logits, 0, 20).top) total += std::exp(double(t.logprob));
  CHECK(total == doctest::Approx(1.0));
}

TEST_CASE("large logits neither overflow nor give a positive logprob") {
  const std::vector<float> logits{1000.0f, -1000.0f, 999.0f};
  const auto p = position_logprobs(logits, 0, 1);
  CHECK(std::isfinite(p.chosen.logprob));
  CHECK(p.chosen.logprob <= 0.0f);
  CHECK(p.chosen.logprob == doctest::Approx(-std::log1p(std::exp(-1.0))));
  CHECK(position_logprobs(std::vector<float>{5.0f}, 0, 1).chosen.logprob == 0.0f);
}
