#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/session/sampler.hpp"
#include "apps/resident_memory.hpp"

using kiln::Sampler;
using kiln::SamplerParams;

namespace {

// Only the random draw: no top-k, top-p or min-p, temperature 1.
SamplerParams plain(uint64_t seed = 1234) {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

SamplerParams greedy() {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  return p;
}

// How often each id is drawn from `logits` in `n` samples.
std::vector<int> histogram(Sampler& sampler, const std::vector<float>& logits, int n) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) ++counts.at(sampler.sample(logits.data()));
  return counts;
}

std::vector<float> log_of(const std::vector<float>& probabilities) {
  std::vector<float> logits;
  for (float p : probabilities) logits.push_back(std::log(p));
  return logits;
}

std::vector<float> random_logits(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(n);
  for (float& l : logits) l = normal(rng);
  return logits;
}

std::string error_of(const SamplerParams& p, int n_vocab = 10) {
  try {
    Sampler sampler(p, n_vocab);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("invalid parameters are rejected with the flag named") {
  SamplerParams p;
  p.top_p = 1.5f;
  CHECK(error_of(p) == "--top-p must be in [0, 1], got 1.5");
  p = {};
  p.min_p = -0.1f;
  CHECK(error_of(p) == "--min-p must be in [0, 1], got -0.1");
  p = {};
  p.repeat_penalty = 0.0f;
  CHECK(error_of(p) == "--repeat-penalty must be > 0, got 0");
  p = {};
  p.repeat_last_n = -1;
  CHECK(error_of(p) == "--repeat-last-n must be >= 0, got -1");
  p = {};
  p.temperature = std::numeric_limits<float>::quiet_NaN();
  CHECK(error_of(p).starts_with("--temp must be a finite number"));
  CHECK(error_of(SamplerParams{}, 0) == "the vocabulary size must be > 0, got 0");
  CHECK(error_of(SamplerParams{}) == "no error");

  Sampler sampler(SamplerParams{}, 10);
  CHECK_THROWS_AS(sampler.accept(10), kiln::Error);
  CHECK_THROWS_AS(sampler.accept(-1), kiln::Error);
}

TEST_CASE("greedy picks the argmax, and the lowest id on ties") {
  Sampler sampler(greedy(), 5);
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 1.9f, 0.0f};
  CHECK(sampler.sample(logits.data()) == 1);
  const std::vector<float> tied{1.0f, 3.0f, 0.0f, 3.0f, 3.0f};
  CHECK(sampler.sample(tied.data()) == 1);
  const std::vector<float> negative{-5.0f, -4.0f, -4.0f, -9.0f, -7.0f};
  CHECK(sampler.sample(negative.data()) == 1);
}

TEST_CASE("top-k = 1 is greedy") {
  SamplerParams p = plain();
  p.top_k = 1;
  Sampler top1(p, 1000);
  Sampler argmax(greedy(), 1000);
  for (uint32_t seed = 0; seed < 50; ++seed) {
    const std::vector<float> logits = random_logits(1000, seed);
    CHECK(top1.sample(logits.data()) == argmax.sample(logits.data()));
  }
}

TEST_CASE("the seed fixes the sequence") {
  const std::vector<float> flat(1000, 0.0f);
  auto draws = [&](const SamplerParams& p) {
    Sampler sampler(p, 1000);
    std::vector<int32_t> ids;
    for (int i = 0; i < 100; ++i) ids.push_back(sampler.sample(flat.data()));
    return ids;
  };
  CHECK(draws(plain(42)) == draws(plain(42)));
  CHECK(draws(plain(42)) != draws(plain(43)));

  // A random seed is reported, and replaying it gives the same draws.
  Sampler random(plain(0xFFFFFFFF), 1000);
  CHECK(random.seed() != 0xFFFFFFFF);
  CHECK(Sampler(plain(7), 10).seed() == 7);
  std::vector<int32_t> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(random.sample(flat.data()));
  CHECK(draws(plain(random.seed())) == ids);

  // reset() starts the sequence over.
  random.reset();
  std::vector<int32_t> again;
  for (int i = 0; i < 100; ++i) again.push_back(random.sample(flat.data()));
  CHECK(again == ids);
}

TEST_CASE("draw frequencies follow softmax(logits / T)") {
  const std::vector<float> logits{1.0f, 2.0f, 0.5f, -1.0f, 3.0f};
  const float temperature = 0.7f;
  SamplerParams p = plain(99);
  p.temperature = temperature;
  Sampler sampler(p, 5);
  const int n = 20000;
  const std::vector<int> counts = histogram(sampler, logits, n);

  double total = 0.0;
  for (float l : logits) total += std::exp(l / temperature);
  double chi_square = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double expected = n * std::exp(logits[i] / temperature) / total;
    chi_square += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  // 4 degrees of freedom: 18.5 is the 0.999 quantile.
  CHECK(chi_square < 18.5);
}

TEST_CASE("top-k, top-p and min-p never let an excluded id through") {
  SUBCASE("top-k keeps the k highest logits") {
    SamplerParams p = plain();
    p.top_k = 3;
    p.temperature = 2.0f;
    Sampler sampler(p, 10);
    const std::vector<float> logits{0.1f, 0.9f, 0.3f, 0.8f, 0.2f, 0.7f, 0.0f, 0.4f, 0.5f, 0.6f};
    const std::vector<int> counts = histogram(sampler, logits, 5000);
    for (int id = 0; id < 10; ++id) {
      CAPTURE(id);
      const bool kept = id == 1 || id == 3 || id == 5;
      CHECK((counts[id] > 0) == kept);
    }
  }
  SUBCASE("top-p keeps the smallest prefix reaching p") {
    SamplerParams p = plain();
    p.top_p = 0.7f;  // 0.5 < 0.7 <= 0.5 + 0.3
    Sampler sampler(p, 4);
    const std::vector<int> counts = histogram(sampler, log_of({0.15f, 0.5f, 0.05f, 0.3f}), 5000);
    CHECK(counts[0] == 0);
    CHECK(counts[1] > 0);
    CHECK(counts[2] == 0);
    CHECK(counts[3] > 0);

    p.top_p = 0.0f;  // at least one token survives
    Sampler only_best(p, 4);
    CHECK(histogram(only_best, log_of({0.15f, 0.5f, 0.05f, 0.3f}), 1000)[1] == 1000);
  }
  SUBCASE("min-p keeps tokens at least min_p times as likely as the best") {
    SamplerParams p = plain();
    p.min_p = 0.2f;  // threshold 0.1
    p.temperature = 3.0f;  // applied after the cut: flattens, but cannot bring id 2 back
    Sampler sampler(p, 4);
    const std::vector<int> counts = histogram(sampler, log_of({0.15f, 0.5f, 0.05f, 0.3f}), 5000);
    CHECK(counts[0] > 0);
    CHECK(counts[1] > 0);
    CHECK(counts[2] == 0);
    CHECK(counts[3] > 0);
  }
}

TEST_CASE("the repetition penalty pushes recent tokens down") {
  SamplerParams p = greedy();
  p.repeat_penalty = 1.5f;
  p.repeat_last_n = 3;
  Sampler sampler(p, 4);
  const std::vector<float> positive{2.0f, 1.9f, -1.0f, 0.0f};
  CHECK(sampler.sample(positive.data()) == 0);
  sampler.accept(0);
  sampler.accept(0);  // counted once: 2.0 / 1.5, not 2.0 / 1.5^2
  CHECK(sampler.sample(positive.data()) == 1);
  CHECK(positive[0] == 2.0f);  // the caller's logits are untouched

  // Negative logits are multiplied, so they also move down.
  const std::vector<float> negative{-1.0f, -1.2f, -5.0f, -5.0f};
  CHECK(sampler.sample(negative.data()) == 1);

  // Once the token leaves the window of the last 3, it is no longer penalized.
  sampler.accept(2);
  sampler.accept(3);
  CHECK(sampler.sample(positive.data()) == 1);
  sampler.accept(3);
  CHECK(sampler.sample(positive.data()) == 0);

  sampler.accept(0);
  sampler.reset();
  CHECK(sampler.sample(positive.data()) == 0);

  // A penalty of 1.0 is off.
  SamplerParams off = greedy();
  off.repeat_penalty = 1.0f;
  Sampler no_penalty(off, 4);
  no_penalty.accept(0);
  CHECK(no_penalty.sample(positive.data()) == 0);
}

TEST_CASE("presence and frequency penalties lower a recent token's logit as OpenAI defines them") {
  // logit - count * frequency_penalty - presence_penalty, found at the edge
  // where greedy sampling flips: token 0 (logit 1.0) was seen twice, token 1
  // has 0.6, so token 0 stays ahead only while the penalties take less than 0.4.
  const std::vector<float> logits{1.0f, 0.6f, -3.0f};
  const auto greedy_after_two = [&](float presence, float frequency) {
    SamplerParams p = greedy();
    p.presence_penalty = presence;
    p.frequency_penalty = frequency;
    Sampler sampler(p, 3);
    sampler.accept(0);
    sampler.accept(0);
    sampler.accept(2);
    return sampler.sample(logits.data());
  };
  CHECK(greedy_after_two(0.35f, 0.0f) == 0);
  CHECK(greedy_after_two(0.45f, 0.0f) == 1);   // once, however often the token came
  CHECK(greedy_after_two(0.0f, 0.15f) == 0);   // 2 x 0.15
  CHECK(greedy_after_two(0.0f, 0.25f) == 1);   // 2 x 0.25
  CHECK(greedy_after_two(0.1f, 0.1f) == 0);    // 0.1 + 2 x 0.1
  CHECK(greedy_after_two(0.1f, 0.2f) == 1);    // 0.1 + 2 x 0.2
  CHECK(greedy_after_two(-2.0f, 0.0f) == 0);   // negative: recent tokens go up
  CHECK(greedy_after_two(0.0f, -1.0f) == 0);

  // The window is repeat_last_n's: a token that left it is not penalized.
  SamplerParams windowed = greedy();
  windowed.presence_penalty = 2.0f;
  windowed.repeat_last_n = 2;
  Sampler sampler(windowed, 3);
  sampler.accept(0);
  CHECK(sampler.sample(logits.data()) == 1);
  sampler.accept(2);
  sampler.accept(2);
  CHECK(sampler.sample(logits.data()) == 0);

  // At temperature 1 the distribution is the softmax of the penalized
  // logits: token 0 seen twice, 0 - (0.5 + 2 x 0.25) = -1 against 0, so
  // p(0) = 1 / (1 + e).
  SamplerParams drawn = plain(77);
  drawn.presence_penalty = 0.5f;
  drawn.frequency_penalty = 0.25f;
  Sampler draws(drawn, 2);
  draws.accept(0);
  draws.accept(0);
  const int n = 40000;
  const std::vector<int> counts = histogram(draws, {0.0f, 0.0f}, n);
  CHECK(double(counts[0]) / n == doctest::Approx(1.0 / (1.0 + std::exp(1.0))).epsilon(0.03));

  // With the repetition penalty, llama.cpp's order: divided first, then lowered.
  SamplerParams both = greedy();
  both.repeat_penalty = 2.0f;
  both.presence_penalty = 0.05f;
  Sampler combined(both, 3);
  combined.accept(0);
  const std::vector<float> close{1.0f, 0.47f, 0.0f};  // 1.0 / 2 - 0.05 = 0.45 < 0.47
  CHECK(combined.sample(close.data()) == 1);
}

TEST_CASE("penalties that are not finite numbers are refused, naming the flag") {
  SamplerParams p = plain();
  p.presence_penalty = std::numeric_limits<float>::infinity();
  CHECK(error_of(p) == "--presence-penalty must be a finite number, got inf");
  p = plain();
  p.frequency_penalty = std::numeric_limits<float>::quiet_NaN();
  CHECK(error_of(p) == "--frequency-penalty must be a finite number, got nan");
}

TEST_CASE("a huge --repeat-last-n costs memory only for the tokens seen") {
  // 10^8 once meant 400 MB allocated up front, even with the penalty off.
  SamplerParams p = greedy();
  p.repeat_penalty = 1.5f;
  p.repeat_last_n = std::numeric_limits<int>::max();
  if (!kiln::reset_peak_resident()) {
    MESSAGE("this system cannot reset the peak resident set; skipped");
    return;
  }
  const int64_t before = kiln::own_status_bytes("VmHWM").value();
  Sampler sampler(p, 4);
  for (int i = 0; i < 1000; ++i) sampler.accept(i % 2);
  CHECK(kiln::own_status_bytes("VmHWM").value() - before < (int64_t{16} << 20));
  const std::vector<float> logits{2.0f, 1.9f, 1.8f, 0.0f};
  CHECK(sampler.sample(logits.data()) == 2);  // 0 and 1, seen long ago, are still in the window
}

TEST_CASE("a 150k vocab samples quickly with the default chain") {
  const int n_vocab = 150000;
  SamplerParams p;
  p.seed = 5;
  Sampler sampler(p, n_vocab);
  const std::vector<float> logits = random_logits(n_vocab, 3);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) sampler.accept(sampler.sample(logits.data()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);
}
