// A conversation with a model: the tokens in its KV cache, batched prompt
// ingestion, and the token-by-token generation loop.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/model.hpp"
#include "engine/sampler.hpp"

namespace kiln {

class Session {
 public:
  explicit Session(Model& model);

  // Appends tokens to the context, max_batch() at a time, computing logits
  // only for the last one; returns them (n_vocab floats, valid until the next
  // call). Throws kiln::Error if the tokens do not fit in the context.
  std::span<const float> ingest(std::span<const int32_t> tokens);

  // Forgets the context (the cache is simply overwritten later).
  void reset() { tokens_.clear(); }

  const std::vector<int32_t>& tokens() const { return tokens_; }
  int n_past() const { return static_cast<int>(tokens_.size()); }
  Model& model() { return model_; }

 private:
  Model& model_;
  std::vector<int32_t> tokens_;  // what the KV cache holds, position by position
  std::vector<float> logits_;
};

struct GenerationStats {
  int prompt_tokens = 0;
  int generated_tokens = 0;
  double prompt_ms = 0;  // ingesting the prompt, up to its logits
  double ttft_ms = 0;    // from the start to the first generated token
  double generate_ms = 0;  // from the first generated token to the last
  bool context_full = false;  // stopped because the context ran out
};

// Ingests `prompt`, then samples up to n_predict tokens (n_predict < 0: until
// end of generation or a full context), calling on_token for each. A prompt
// longer than the context is a kiln::Error; nothing is truncated.
GenerationStats generate(Session& session, std::span<const int32_t> prompt, int n_predict, Sampler& sampler,
                         const std::function<void(int32_t)>& on_token);

}  // namespace kiln
