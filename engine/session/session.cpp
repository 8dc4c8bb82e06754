#include "engine/session/session.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "engine/error/error.hpp"
#include "engine/session/state_file.hpp"
#include "engine/timing/elapsed.hpp"

namespace kiln {

namespace {

std::string prompt_too_long(const Model& model, const std::string& length) {
  return "the prompt is " + length + " tokens, but the context holds " + std::to_string(model.n_ctx()) +
         " (set at build time: kiln_add_model CTX)";
}

}  // namespace

void check_prompt_fits(const Model& model, size_t n_tokens) {
  if (n_tokens > static_cast<size_t>(model.n_ctx())) throw Error(prompt_too_long(model, std::to_string(n_tokens)));
}

std::string prompt_longer_than_context(const Model& model) {
  return prompt_too_long(model, "more than " + std::to_string(model.n_ctx()));
}

std::vector<int32_t> tokenize_prompt(const Model& model, std::string_view text) {
  std::optional<std::vector<int32_t>> tokens =
      model.tokenizer().encode_at_most(static_cast<size_t>(model.n_ctx()), text, /*add_special=*/true,
                                       /*parse_special=*/true);
  if (!tokens) throw Error(prompt_longer_than_context(model));
  return std::move(*tokens);
}

Session::Session(const Model& model)
    : model_(model), sequence_(model.new_sequence()), logits_(static_cast<size_t>(model.n_vocab())) {
  tokens_.reserve(static_cast<size_t>(model.n_ctx()));
}

std::span<const float> Session::ingest(std::span<const int32_t> tokens) {
  if (tokens.empty()) throw Error("nothing to ingest: the token list is empty");
  if (n_past() + tokens.size() > static_cast<size_t>(model_.n_ctx()))
    throw Error(std::to_string(n_past() + tokens.size()) + " tokens do not fit in the context of " +
                std::to_string(model_.n_ctx()) + " (set at build time: kiln_add_model CTX)");
  for (size_t done = 0; done < tokens.size();) {
    const size_t n = std::min(tokens.size() - done, static_cast<size_t>(model_.max_batch()));
    const bool last = done + n == tokens.size();
    sequence_->forward(tokens.data() + done, static_cast<int>(n), n_past(), last ? Logits::Last : Logits::None,
                   logits_.data());
    tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + n);
    done += n;
  }
  return logits_;
}

Session::ReusePoint Session::reuse_point(std::span<const int32_t> prompt, size_t limit) const {
  const size_t shared = std::min(common_prefix_length(tokens_, prompt), limit);
  if (kv_continues_at(model_.sliding_window(), sequence_->kv_held_from(), static_cast<int>(shared))) return {shared};
  const WindowCheckpoints::Checkpoint* c = checkpoints_.find(tokens_, shared);
  return c ? ReusePoint{c->tokens.size(), c} : ReusePoint{};
}

std::span<const float> Session::ingest_prompt(std::span<const int32_t> prompt, size_t checkpoint_at) {
  if (prompt.empty()) throw Error("nothing to ingest: the prompt is empty");
  check_prompt_fits(model_, prompt.size());
  // At least the prompt's last token is computed, for its logits.
  const ReusePoint kept = reuse_point(prompt, prompt.size() - 1);
  if (kept.checkpoint) WindowCheckpoints::restore(*sequence_, *kept.checkpoint);
  tokens_.resize(kept.length);
  last_reused_ = static_cast<int>(kept.length);
  if (checkpoint_at > kept.length && checkpoint_at < prompt.size()) {
    ingest(prompt.subspan(kept.length, checkpoint_at - kept.length));
    checkpoints_.take(*sequence_, tokens_);
    return ingest(prompt.subspan(checkpoint_at));
  }
  // A branch point already behind: checkpointed now if the rings still hold its window and no checkpoint has it.
  const std::span<const int32_t> before = prompt.first(std::min(checkpoint_at, kept.length));
  if (!before.empty() && kv_continues_at(model_.sliding_window(), sequence_->kv_held_from(), int(before.size())) &&
      checkpoints_.find(before, before.size()) == nullptr)
    checkpoints_.take(*sequence_, before);
  return ingest(prompt.subspan(kept.length));
}

std::span<const float> Session::ingest_every_position(std::span<const int32_t> prompt, const PositionLogits& on_logits) {
  if (prompt.empty()) throw Error("nothing to ingest: the prompt is empty");
  check_prompt_fits(model_, prompt.size());
  const size_t vocab = static_cast<size_t>(model_.n_vocab());
  // Rows of logits per forward call: a batch's, unless that would take more
  // than 64 MiB (512 rows of a 150k vocabulary would take 300).
  constexpr size_t kMaxLogitBytes = size_t{64} << 20;
  const size_t rows = std::clamp(kMaxLogitBytes / (vocab * sizeof(float)), size_t{1}, static_cast<size_t>(model_.max_batch()));
  std::vector<float> logits(rows * vocab);
  tokens_.clear();
  last_reused_ = 0;
  for (size_t done = 0; done < prompt.size();) {
    const size_t n = std::min(prompt.size() - done, rows);
    sequence_->forward(prompt.data() + done, static_cast<int>(n), n_past(), Logits::All, logits.data());
    tokens_.insert(tokens_.end(), prompt.begin() + static_cast<std::ptrdiff_t>(done),
                   prompt.begin() + static_cast<std::ptrdiff_t>(done + n));
    for (size_t i = 0; i < n; ++i) on_logits(done + i, std::span<const float>(logits).subspan(i * vocab, vocab));
    done += n;
  }
  const size_t last = (prompt.size() - 1) % rows;
  std::copy_n(logits.begin() + static_cast<std::ptrdiff_t>(last * vocab), vocab, logits_.begin());
  return logits_;
}

size_t Session::reusable_prefix(std::span<const int32_t> prompt) const {
  return reuse_point(prompt, prompt.size()).length;
}

SessionState Session::snapshot(size_t n_tokens) const {
  if (n_tokens > tokens_.size())
    throw Error("cannot snapshot " + std::to_string(n_tokens) + " positions, the context holds " +
                std::to_string(tokens_.size()));
  SessionState s;
  s.fingerprint = model_.fingerprint();
  s.kv = model_.kv_layout();
  s.tokens.assign(tokens_.begin(), tokens_.begin() + static_cast<std::ptrdiff_t>(n_tokens));
  s.kv_bytes.resize(n_tokens * s.kv.bytes_per_position());
  sequence_->read_kv(0, static_cast<int>(n_tokens), s.kv_bytes.data());
  s.held_from = std::min(sequence_->kv_held_from(), static_cast<int>(n_tokens));
  return s;
}

size_t Session::restore_prefix(const SessionState& state, std::span<const int32_t> prompt) {
  check_state_fits(state, model_);
  const size_t n = kiln::reusable_prefix(state.tokens, state.held_from, model_.sliding_window(), prompt);
  sequence_->write_kv(0, static_cast<int>(n), state.kv_bytes.data(), state.held_from);
  tokens_.assign(state.tokens.begin(), state.tokens.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

void Session::save_state(const std::string& path) const { write_state_file(path, snapshot()); }

void Session::load_state(const std::string& path) {
  try {
    restore(read_state_file(path));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

GenerationStats generate(Session& session, std::span<const int32_t> prompt, int n_predict, Sampler& sampler,
                         const TokenCallback& on_token) {
  const Model& model = session.model();
  GenerationStats stats;
  stats.prompt_tokens = static_cast<int>(prompt.size());

  const auto t0 = std::chrono::steady_clock::now();
  std::span<const float> logits = session.ingest_prompt(prompt);
  stats.prompt_ms = ms_since(t0);
  stats.reused_tokens = session.last_reused();
  for (int32_t t : prompt) sampler.accept(t);

  std::chrono::steady_clock::time_point first_token_time;
  for (int i = 0; n_predict < 0 || i < n_predict; ++i) {
    const int32_t token = sampler.sample(logits.data());
    if (i == 0) {
      first_token_time = std::chrono::steady_clock::now();
      stats.ttft_ms = ms_since(t0);
    }
    sampler.accept(token);
    if (model.tokenizer().is_end_of_generation(token)) break;
    const bool go_on = on_token(token);
    ++stats.generated_tokens;
    if (sampler.finished()) break;  // the constraint's grammar is complete
    if (session.n_past() >= model.n_ctx()) {
      stats.context_full = true;
      break;
    }
    const int32_t one[] = {token};
    logits = session.ingest(one);
    if (!go_on) {
      stats.stopped = true;
      break;
    }
  }
  if (stats.generated_tokens > 0) stats.generate_ms = ms_since(first_token_time);
  return stats;
}

}  // namespace kiln
