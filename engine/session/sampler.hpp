// Picks the next token from a row of logits, with llama.cpp's default chain:
// penalties (repetition, presence, frequency) -> constraint mask -> (greedy when temperature <= 0) ->
// top-k -> top-p -> min-p -> temperature -> seeded random draw.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace kiln {

// The seed that asks for a random one (llama.cpp's LLAMA_DEFAULT_SEED; -s -1).
inline constexpr uint64_t kRandomSeed = 0xFFFFFFFF;

// llama.cpp's defaults.
struct SamplerParams {
  float temperature = 0.8f;     // <= 0: greedy
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // 1: off
  float min_p = 0.05f;          // 0: off
  float repeat_penalty = 1.0f;  // 1: off
  // OpenAI's: a recent token's logit loses presence_penalty once and
  // frequency_penalty per occurrence. 0: off.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int repeat_last_n = 64;  // how many recent tokens the penalties look at
  uint64_t seed = kRandomSeed;
};

// A constraint on the generated text (a grammar: engine/grammar/): which
// tokens may come next, and the tokens that came.
class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Sets the logit (n_vocab values) of every token that may not come next
  // to -infinity.
  virtual void mask(float* logits) = 0;
  virtual void accept(int32_t token) = 0;
  // Nothing but the end of the generation may come.
  virtual bool is_finished() const = 0;
};

class Sampler {
 public:
  // Throws kiln::Error naming the flag when a parameter is out of range.
  Sampler(const SamplerParams& p, int n_vocab);

  // The chosen id. `logits` holds n_vocab values and is not modified. With
  // a constraint, only a token it allows, which it then reads.
  int32_t sample(const float* logits);
  // Samples only what `c` allows from now on. The mask comes before the
  // filters, so temperature, top-k/p and the seed act on the allowed tokens
  // as they would on all of them.
  void constrain(std::unique_ptr<TokenConstraint> c) { constraint_ = std::move(c); }
  // The constraint allows nothing but the end of the generation.
  bool finished() const { return constraint_ && constraint_->is_finished(); }
  // Records a token (prompt tokens too) for the penalties.
  void accept(int32_t token);
  // Forgets the recorded tokens and restarts the random sequence from seed();
  // a constraint stays where the tokens it read left it.
  void reset();
  uint64_t seed() const { return seed_; }

 private:
  void apply_penalties();
  int32_t argmax() const;
  // Keeps the first `n_kept_` candidates that the filters allow, best first.
  void filter_candidates();
  int32_t draw();

  SamplerParams params_;
  int n_vocab_;
  std::unique_ptr<TokenConstraint> constraint_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  // Scratch buffers, sized once so sample() does not allocate.
  std::vector<float> logits_;          // penalized copy of the input
  std::vector<int32_t> candidates_;    // token ids; the first n_kept_ survive the filters
  std::vector<float> weights_;         // unnormalized probabilities of the kept candidates
  std::vector<int32_t> counts_;        // per id: occurrences in the window (0 outside apply_penalties)
  int n_kept_ = 0;
  // The last repeat_last_n accepted tokens: appended until there are that
  // many, then a ring buffer whose oldest entry is at recent_next_.
  std::vector<int32_t> recent_;
  size_t recent_next_ = 0;
};

}  // namespace kiln
