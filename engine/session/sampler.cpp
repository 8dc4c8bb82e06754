#include "engine/session/sampler.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/error/error.hpp"
#include "kernels/argmax.hpp"

namespace kiln {

namespace {

// Shortest text that reads back as `v` ("1.5", not "1.500000").
std::string to_text(float v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

void require(bool ok, const std::string& flag, const std::string& rule, const std::string& value) {
  if (!ok) throw Error(flag + " must be " + rule + ", got " + value);
}

void validate(const SamplerParams& p, int n_vocab) {
  require(n_vocab > 0, "the vocabulary size", "> 0", std::to_string(n_vocab));
  // Comparisons written so that NaN fails them.
  require(std::isfinite(p.temperature), "--temp", "a finite number", to_text(p.temperature));
  require(p.top_p >= 0.0f && p.top_p <= 1.0f, "--top-p", "in [0, 1]", to_text(p.top_p));
  require(p.min_p >= 0.0f && p.min_p <= 1.0f, "--min-p", "in [0, 1]", to_text(p.min_p));
  require(p.repeat_penalty > 0.0f && std::isfinite(p.repeat_penalty), "--repeat-penalty", "> 0",
          to_text(p.repeat_penalty));
  require(std::isfinite(p.presence_penalty), "--presence-penalty", "a finite number", to_text(p.presence_penalty));
  require(std::isfinite(p.frequency_penalty), "--frequency-penalty", "a finite number", to_text(p.frequency_penalty));
  require(p.repeat_last_n >= 0, "--repeat-last-n", ">= 0", std::to_string(p.repeat_last_n));
}

uint64_t choose_seed(uint64_t requested) {
  if (requested != kRandomSeed) return requested;
  std::random_device device;
  uint64_t seed;
  do {
    seed = (static_cast<uint64_t>(device()) << 32) | device();
  } while (seed == kRandomSeed);  // so that seed() can be passed back to replay the run
  return seed;
}

}  // namespace

Sampler::Sampler(const SamplerParams& p, int n_vocab) : params_(p), n_vocab_(n_vocab) {
  validate(p, n_vocab);
  seed_ = choose_seed(p.seed);
  rng_.seed(seed_);
  logits_.resize(n_vocab);
  candidates_.resize(n_vocab);
  weights_.resize(n_vocab);
  counts_.assign(n_vocab, 0);
  // So that accept() does not allocate while the window fills (a window wider
  // than any context would never fill, so the reservation stops somewhere).
  constexpr int kMaxReservedWindow = 1 << 16;
  recent_.reserve(static_cast<size_t>(std::min(p.repeat_last_n, kMaxReservedWindow)));
}

int32_t Sampler::sample(const float* logits) {
  std::copy(logits, logits + n_vocab_, logits_.begin());
  apply_penalties();
  if (constraint_) constraint_->mask(logits_.data());
  int32_t token;
  if (params_.temperature <= 0.0f) {
    token = argmax();
  } else {
    filter_candidates();
    token = draw();
  }
  if (constraint_) constraint_->accept(token);
  return token;
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_) {
    throw Error("token id " + std::to_string(token) + " is out of range (the vocab has " +
                std::to_string(n_vocab_) + " tokens)");
  }
  // The window grows with the tokens accepted, up to repeat_last_n: its size
  // is bounded by the context, however large the flag.
  if (recent_.size() < static_cast<size_t>(params_.repeat_last_n)) {
    recent_.push_back(token);
    return;
  }
  if (recent_.empty()) return;
  recent_[recent_next_] = token;
  recent_next_ = (recent_next_ + 1) % recent_.size();
}

void Sampler::reset() {
  recent_.clear();
  recent_next_ = 0;
  rng_.seed(seed_);
}

// Over the window of recent tokens, as llama.cpp's penalties: each distinct
// token's logit is divided (if positive) or multiplied by repeat_penalty,
// then lowered by presence_penalty and by frequency_penalty times its count.
void Sampler::apply_penalties() {
  const SamplerParams& p = params_;
  if (p.repeat_penalty == 1.0f && p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f) return;
  for (const int32_t token : recent_) ++counts_[token];
  for (const int32_t token : recent_) {
    int32_t& count = counts_[token];
    if (count == 0) continue;  // a repeat of a token already penalized
    float& logit = logits_[token];
    if (p.repeat_penalty != 1.0f) logit = logit > 0.0f ? logit / p.repeat_penalty : logit * p.repeat_penalty;
    logit -= static_cast<float>(count) * p.frequency_penalty + p.presence_penalty;
    count = 0;
  }
}

int32_t Sampler::argmax() const { return static_cast<int32_t>(kernels::argmax(logits_.data(), n_vocab_)); }

// The probabilities that top-p and min-p look at are taken at temperature 1,
// as llama.cpp does: temperature only reshapes what survives.
void Sampler::filter_candidates() {
  std::iota(candidates_.begin(), candidates_.end(), 0);
  const auto better = [this](int32_t a, int32_t b) {
    return logits_[a] > logits_[b] || (logits_[a] == logits_[b] && a < b);
  };
  const bool top_k_on = params_.top_k > 0 && params_.top_k < n_vocab_;
  n_kept_ = top_k_on ? params_.top_k : n_vocab_;
  if (top_k_on) {
    std::partial_sort(candidates_.begin(), candidates_.begin() + n_kept_, candidates_.end(), better);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), better);
  }
  const float max_logit = logits_[candidates_[0]];

  if (params_.top_p < 1.0f) {
    double total = 0.0;
    for (int i = 0; i < n_kept_; ++i) {
      weights_[i] = std::exp(logits_[candidates_[i]] - max_logit);
      total += weights_[i];
    }
    double cumulative = 0.0;
    for (int i = 0; i < n_kept_; ++i) {
      cumulative += weights_[i];
      if (cumulative >= params_.top_p * total) {
        n_kept_ = i + 1;
        break;
      }
    }
  }

  if (params_.min_p > 0.0f) {
    // p_i >= min_p * p_max  <=>  logit_i >= max_logit + log(min_p)
    const float threshold = max_logit + std::log(params_.min_p);
    int kept = 1;
    while (kept < n_kept_ && logits_[candidates_[kept]] >= threshold) ++kept;
    n_kept_ = kept;
  }
}

int32_t Sampler::draw() {
  const float max_logit = logits_[candidates_[0]];
  double total = 0.0;
  for (int i = 0; i < n_kept_; ++i) {
    weights_[i] = std::exp((logits_[candidates_[i]] - max_logit) / params_.temperature);
    total += weights_[i];
  }
  // The top 53 bits of the generator give a uniform double in [0, 1).
  const double target = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * total;
  double cumulative = 0.0;
  for (int i = 0; i < n_kept_; ++i) {
    cumulative += weights_[i];
    if (target < cumulative) return candidates_[i];
  }
  return candidates_[n_kept_ - 1];  // rounding can leave target just past the last sum
}

}  // namespace kiln
