// A conversation with a model: a sequence of its own (KV cache, scratch,
// threads) on the model's shared weights, the tokens in that cache, batched
// prompt ingestion that reuses what the cache already holds, saving and
// restoring that state, and the token-by-token generation loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.hpp"
#include "engine/session/sampler.hpp"
#include "engine/session/session_state.hpp"
#include "engine/session/window_checkpoints.hpp"

namespace kiln {

// Throws kiln::Error "the prompt is <n> tokens, but the context holds ..."
// when n_tokens positions do not fit in the model's context.
void check_prompt_fits(const Model& model, size_t n_tokens);
// The message of the same error for a prompt that tokenizing gave up on
// (Tokenizer::encode_at_most): "the prompt is more than <n_ctx> tokens, ...".
std::string prompt_longer_than_context(const Model& model);
// `text` as the programs take a prompt (BOS as the model asks, special-token
// text read as those tokens), refused as above as soon as it is known not to
// fit in the context: without reading it if its length proves it, else
// without tokenizing more than fits.
std::vector<int32_t> tokenize_prompt(const Model& model, std::string_view text);

// Sessions on one model are independent: each may be driven by its own
// thread (docs/ARCHITECTURE.md, "Sessions"); one session is used by one
// thread at a time. The model must outlive its sessions.
class Session {
 public:
  // Allocates the session's sequence (Model::new_sequence), on one thread.
  explicit Session(const Model& model);

  // Appends tokens to the context, max_batch() at a time, computing logits
  // only for the last one; returns them (n_vocab floats, valid until the next
  // call). Throws kiln::Error if the tokens do not fit in the context.
  std::span<const float> ingest(std::span<const int32_t> tokens);

  // Makes the context `prompt` and returns the logits of its last token
  // (valid until the next call): keeps the longest prefix the cache already
  // shares with `prompt`, forgets whatever followed it, and ingests only the
  // rest. A prompt the cache holds entirely still has its last token ingested
  // again, since only the KV cache, not the logits, is kept. Throws
  // kiln::Error, with the context unchanged, if the prompt is empty or longer
  // than the context.
  // checkpoint_at (0: none) names a position where later prompts are likely
  // to branch off this one (after a system prompt): in a model whose
  // sliding-window layers keep a ring, their window there is copied
  // (WindowCheckpoints), so that such a prompt keeps that prefix after the
  // rings have moved on.
  std::span<const float> ingest_prompt(std::span<const int32_t> prompt, size_t checkpoint_at = 0);
  // Makes the context `prompt` computed whole from its first position
  // (nothing is reused: the logits of every position are wanted) and calls
  // on_logits(i, row) with position i's logits (n_vocab floats, valid during
  // the call), in order; returns the last position's, as ingest_prompt does.
  // Throws as ingest_prompt does.
  using PositionLogits = std::function<void(size_t, std::span<const float>)>;
  std::span<const float> ingest_every_position(std::span<const int32_t> prompt, const PositionLogits& on_logits);
  // The logits of the last token ingested (n_vocab floats, valid until the
  // next call; meaningless before the first ingest).
  std::span<const float> logits() const { return logits_; }
  // How many positions the last ingest_prompt kept instead of computing.
  int last_reused() const { return last_reused_; }
  // How many leading tokens of `prompt` the context holds in a form the
  // cache can go on from (kv_continues_at), or that a window checkpoint
  // restores: what ingest_prompt keeps, but for the prompt's last token.
  size_t reusable_prefix(std::span<const int32_t> prompt) const;

  // Forgets the context (the cache is simply overwritten later).
  void reset() { tokens_.clear(); }

  // The context as a value: all of it, or its first n_tokens positions.
  SessionState snapshot() const { return snapshot(tokens_.size()); }
  SessionState snapshot(size_t n_tokens) const;
  // Replaces the context with `state`, or with only the longest prefix it
  // shares with `prompt` (returning that length; none where the state's
  // sliding window before that prefix's end is gone: reusable_prefix), for
  // ingest_prompt to go on from. The state is checked first (check_state_fits): a kiln::Error leaves
  // the context and the cache untouched.
  void restore(const SessionState& state) { restore_prefix(state, state.tokens); }
  size_t restore_prefix(const SessionState& state, std::span<const int32_t> prompt);

  // snapshot() / restore() through a state file (engine/session/state_file.hpp).
  // Errors are kiln::Error "<path>: <reason>"; a bad file changes nothing.
  void save_state(const std::string& path) const;
  void load_state(const std::string& path);

  const std::vector<int32_t>& tokens() const { return tokens_; }
  int n_past() const { return static_cast<int>(tokens_.size()); }
  const Model& model() const { return model_; }
  // The session's own KV cache and threads (Sequence::set_threads). Forward
  // calls made on it directly bypass tokens(): reset() the session after.
  Sequence& sequence() { return *sequence_; }
  const Sequence& sequence() const { return *sequence_; }

 private:
  friend class SessionBatch;  // appends what its batched passes computed

  // Where a prompt can go on from: `length` of its tokens, from the cache as
  // it is or after restoring `checkpoint`.
  struct ReusePoint {
    size_t length = 0;
    const WindowCheckpoints::Checkpoint* checkpoint = nullptr;
  };
  ReusePoint reuse_point(std::span<const int32_t> prompt, size_t limit) const;

  const Model& model_;
  std::unique_ptr<Sequence> sequence_;
  std::vector<int32_t> tokens_;  // what the KV cache holds, position by position
  WindowCheckpoints checkpoints_;
  std::vector<float> logits_;
  int last_reused_ = 0;
};

struct GenerationStats {
  int prompt_tokens = 0;
  int reused_tokens = 0;  // prompt positions the session's cache already held (Session::last_reused)
  int generated_tokens = 0;
  double prompt_ms = 0;  // ingesting the prompt, up to its logits
  double ttft_ms = 0;    // from the start to the first generated token
  double generate_ms = 0;  // from the first generated token to the last
  bool context_full = false;  // stopped because the context ran out
  bool stopped = false;       // stopped because on_token returned false
};

// Called with each generated token; returns whether to go on.
using TokenCallback = std::function<bool(int32_t)>;

// Makes `prompt` the session's context (Session::ingest_prompt: a prefix the
// cache already holds is not computed again), then samples up to n_predict
// tokens (n_predict < 0: until end of generation or a full context), calling
// on_token for each and ingesting it, until on_token returns false. A prompt
// longer than the context is a kiln::Error; nothing is truncated.
GenerationStats generate(Session& session, std::span<const int32_t> prompt, int n_predict, Sampler& sampler,
                         const TokenCallback& on_token);

}  // namespace kiln
