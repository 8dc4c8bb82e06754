#include "apps/server/completion.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/chat/chat_prompt.hpp"
#include "engine/grammar/grammar_constraint.hpp"
#include "apps/server/stop_text.hpp"
#include "engine/elapsed.hpp"
#include "engine/error.hpp"

namespace kiln {

namespace {

CompletionEvent error_event(int status, const std::string& message) {
  CompletionEvent e;
  e.kind = CompletionEvent::Kind::Error;
  e.status = status;
  e.text = message;
  return e;
}

}  // namespace

void EventQueue::push(CompletionEvent e) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(e));
  }
  ready_.notify_one();
}

CompletionEvent EventQueue::pop() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty(); });
  CompletionEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

// A slot's own state: its session, the chat text its cache stands for, and
// the request it generates for (none when idle).
struct CompletionRunner::Slot {
  Slot(const Model& model, int i) : session(model), index(i) {}
  Session session;
  int index;
  // The rendered chat text the session's tokens stand for (the last chat's
  // prompt and reply); empty when they stand for none (after a plain
  // completion, a cancelled request, an error).
  std::string session_text;
  Job* job = nullptr;
  std::unique_ptr<Generation> generation;
};

// One request's generation, from its prompt's logits to Done.
struct CompletionRunner::Generation {
  Generation(const Model& model, const CompletionRequest& r)
      : sampler(r.sampling, model.n_vocab()), detok(model.tokenizer()), stop(r.stop) {}
  Sampler sampler;
  Detokenizer detok;
  StopText stop;
  std::string rendered;  // a chat's prompt text
  std::string reply;     // the text of every generated token, stop strings included
  CompletionResult result;
  int from_cache = 0;          // of the prompt tokens reused, those the prefix cache gave (for the log)
  int32_t not_ingested = -1;  // the last generated token, once sampled
  bool done = false;          // Done is sent; only not_ingested is left to ingest
  int widest_step = 1;        // the most sequences a step of this request's computed together (for the log)
  size_t trigger_from = 0;    // where in `reply` the request's call_trigger may still begin
  bool call_started = false;  // the reply wrote the call_trigger: the rest follows call_grammar
  std::chrono::steady_clock::time_point first_token;
};

CompletionRunner::CompletionRunner(const Model& model, int threads, int n_slots, size_t cache_bytes,
                                   const std::vector<std::string>& kept_tokens)
    : model_(model), batch_(model), per_pass_(std::min(size_t(n_slots), size_t(model.max_batch()))) {
  const Tokenizer& tok = model.tokenizer();
  for (int32_t id = 0; id < tok.n_vocab(); ++id)
    if (tok.text(id).empty() && !tok.is_end_of_generation(id) &&
        std::find(kept_tokens.begin(), kept_tokens.end(), tok.piece(id)) != kept_tokens.end())
      kept_.push_back(id);
  if (cache_bytes > 0) store_.emplace(cache_bytes);
  for (int i = 0; i < n_slots; ++i) {
    slots_.push_back(std::make_unique<Slot>(model, i));
    slots_.back()->session.sequence().set_threads(threads);
  }
  batch_.batch().set_threads(threads);
  parts_.reserve(per_pass_);
  part_slots_.reserve(per_pass_);
  logits_.resize(per_pass_ * size_t(model.n_vocab()));
}

CompletionRunner::~CompletionRunner() = default;

bool CompletionRunner::busy(int slot) const { return slots_[size_t(slot)]->job != nullptr; }

size_t CompletionRunner::cached(int slot) const { return slots_[size_t(slot)]->session.tokens().size(); }

size_t CompletionRunner::reusable(int slot_index, const Job& job) const {
  const Slot& slot = *slots_[size_t(slot_index)];
  if (continues_chat(slot, job)) return slot.session.tokens().size();
  return common_prefix_length(slot.session.tokens(), job.prompt.tokens);
}

// A plain completion's rendered text is empty, and so never goes on from one.
bool CompletionRunner::continues_chat(const Slot& slot, const Job& job) {
  return chat::extends_text(job.prompt.rendered, slot.session_text);
}

std::vector<int32_t> CompletionRunner::slot_prompt(const Slot& slot, const Job& job) const {
  if (!continues_chat(slot, job)) return job.prompt.tokens;
  std::vector<int32_t> prompt = slot.session.tokens();
  chat::extend_rendered(model_.tokenizer(), job.prompt.rendered, slot.session_text, prompt);
  check_request_fits(model_, job.request, prompt.size());
  return prompt;
}

size_t CompletionRunner::seed(Slot& slot, std::span<const int32_t> prompt) {
  if (!store_) return 0;
  const size_t own = common_prefix_length(slot.session.tokens(), prompt);
  // Taken before seeding overwrites the cache, stored after, so that storing
  // it cannot evict the entry that seeds this prompt.
  std::optional<SessionState> displaced;
  if (own < slot.session.tokens().size()) displaced = slot.session.snapshot();
  const size_t seeded = store_->seed(slot.session, prompt);
  if (displaced) store_->put(std::move(*displaced));
  return seeded > own ? seeded : 0;
}

void CompletionRunner::start(int slot_index, Job& job) {
  Slot& slot = *slots_[size_t(slot_index)];
  if (job.cancelled) {  // the client left while the request waited
    job.events.push(error_event(499, "the client closed the connection"));
    return;
  }
  std::vector<int32_t> prompt;
  try {
    prompt = slot_prompt(slot, job);
  } catch (const RequestError& e) {
    job.events.push(error_event(e.status, e.what()));
    return;
  } catch (const std::exception& e) {
    job.events.push(error_event(500, e.what()));
    return;
  }
  job.events.push(CompletionEvent{CompletionEvent::Kind::Started, "", {}, 200});
  slot.session_text.clear();  // until the session holds this request's text
  slot.job = &job;
  try {
    slot.generation = std::make_unique<Generation>(model_, job.request);
    Generation& g = *slot.generation;
    if (job.request.grammar)
      g.sampler.constrain(std::make_unique<grammar::GrammarConstraint>(job.request.grammar, vocabulary()));
    g.rendered = job.prompt.rendered.str();
    g.result.prompt_tokens = static_cast<int>(prompt.size());
    g.result.finish_reason = "length";
    const auto t0 = std::chrono::steady_clock::now();
    const size_t from_cache = seed(slot, prompt);
    const std::span<const float> logits = slot.session.ingest_prompt(prompt);
    g.result.prompt_ms = ms_since(t0);
    g.result.cached_tokens = slot.session.last_reused();
    g.from_cache = std::min(static_cast<int>(from_cache), g.result.cached_tokens);
    // The reply's text as it reads after the prompt (SentencePiece drops a
    // leading space only at the start of a text).
    for (int32_t t : prompt) {
      g.sampler.accept(t);
      g.detok.push(t);
    }
    g.first_token = std::chrono::steady_clock::now();
    advance(slot, logits.data());
  } catch (const std::exception& e) {  // after Started: the stream shows it
    job.events.push(error_event(500, e.what()));
    slot.job = nullptr;
    slot.generation.reset();
  }
}

void CompletionRunner::step() {
  // The slots' next tokens, max_batch() per forward pass. A slot whose
  // request is done ingests its last token without logits, so that a chat
  // that goes on from its reply finds all of it in the cache.
  for (size_t next = 0; next < slots_.size();) {
    parts_.clear();
    part_slots_.clear();
    for (; next < slots_.size() && parts_.size() < per_pass_; ++next) {
      Slot& slot = *slots_[next];
      if (!slot.job) continue;
      Generation& g = *slot.generation;
      parts_.push_back({&slot.session, {&g.not_ingested, 1}, g.done ? Logits::None : Logits::Last});
      part_slots_.push_back(&slot);
    }
    if (parts_.empty()) return;
    try {
      batch_.ingest(parts_, logits_.data());
    } catch (const std::exception& e) {  // not expected: every part was checked to fit
      for (Slot* slot : part_slots_) {
        if (!slot->generation->done) slot->job->events.push(error_event(500, e.what()));
        slot->job = nullptr;
        slot->generation.reset();
      }
      continue;
    }
    const float* row = logits_.data();
    for (Slot* slot : part_slots_) {
      slot->generation->widest_step = std::max(slot->generation->widest_step, static_cast<int>(parts_.size()));
      slot->generation->not_ingested = -1;
      if (slot->generation->done) {
        release(*slot);
        continue;
      }
      advance(*slot, row);
      row += model_.n_vocab();
    }
  }
}

void CompletionRunner::advance(Slot& slot, const float* logits) {
  Generation& g = *slot.generation;
  const CompletionRequest& r = slot.job->request;
  const Tokenizer& tok = model_.tokenizer();
  int32_t token = 0;
  try {
    token = g.sampler.sample(logits);
  } catch (const Error& e) {  // the request's grammar allows no token here
    slot.job->events.push(error_event(400, e.what()));
    slot.job = nullptr;
    slot.generation.reset();
    return;
  }
  g.sampler.accept(token);
  if (tok.is_end_of_generation(token)) {
    g.result.finish_reason = "stop";
    return finish(slot);
  }
  ++g.result.completion_tokens;
  g.not_ingested = token;
  const std::string piece = std::binary_search(kept_.begin(), kept_.end(), token)
                                ? g.detok.flush() + std::string(tok.piece(token))
                                : g.detok.push(token);
  g.reply += piece;
  const std::string out = g.stop.push(piece);
  if (!out.empty()) slot.job->events.push(CompletionEvent{CompletionEvent::Kind::Text, out, {}, 200});
  if (r.call_grammar && !g.call_started) constrain_started_call(g, r);
  if (g.sampler.finished()) g.result.finish_reason = "stop";  // the grammar allows nothing more
  const bool at_max = r.max_tokens >= 0 && g.result.completion_tokens >= r.max_tokens;
  if (g.stop.stopped() || g.sampler.finished() || slot.job->cancelled || at_max ||
      slot.session.n_past() >= model_.n_ctx())
    finish(slot);
}

void CompletionRunner::finish(Slot& slot) {
  Generation& g = *slot.generation;
  Job& job = *slot.job;
  const CompletionRequest& r = job.request;
  const std::string rest = g.detok.flush();
  g.reply += rest;
  std::string out = g.stop.push(rest);
  if (!g.stop.stopped()) out += g.stop.flush();
  if (!out.empty()) job.events.push(CompletionEvent{CompletionEvent::Kind::Text, out, {}, 200});
  if (g.stop.stopped()) g.result.finish_reason = "stop";
  if (g.result.completion_tokens > 0) g.result.generation_ms = ms_since(g.first_token);
  const std::string from_cache =
      g.from_cache > 0 ? " (" + std::to_string(g.from_cache) + " from the prefix cache)" : std::string();
  std::fprintf(stderr, "slot %d: %s: %d prompt tokens, %d reused%s, %d computed in %.2f ms; %d generated in %.2f ms, in "
               "steps of up to %d sequences; %s%s\n",
               slot.index, r.endpoint == Endpoint::ChatCompletions ? "chat" : "completion", g.result.prompt_tokens,
               g.result.cached_tokens, from_cache.c_str(), g.result.prompt_tokens - g.result.cached_tokens, g.result.prompt_ms,
               g.result.completion_tokens, g.result.generation_ms, g.widest_step, g.result.finish_reason.c_str(),
               job.cancelled ? " (client gone)" : "");
  job.events.push(CompletionEvent{CompletionEvent::Kind::Done, "", g.result, 200});
  g.done = true;
  // A last token that the context has no room for is never ingested.
  if (g.not_ingested >= 0 && slot.session.n_past() >= model_.n_ctx()) return release(slot);
  if (g.not_ingested < 0) release(slot);
}

void CompletionRunner::constrain_started_call(Generation& g, const CompletionRequest& r) {
  const size_t at = g.reply.find(r.call_trigger, g.trigger_from);
  if (at == std::string::npos) {
    g.trigger_from = g.reply.size() - std::min(g.reply.size(), r.call_trigger.size() - 1);
    return;
  }
  g.call_started = true;
  auto call = std::make_unique<grammar::GrammarConstraint>(r.call_grammar, vocabulary());
  // The marker and what followed it in the same token; a call that does not
  // read as the grammar's from there is left as the model writes it.
  if (call->accept_text(std::string_view(g.reply).substr(at))) g.sampler.constrain(std::move(call));
}

std::shared_ptr<const grammar::TokenTrie> CompletionRunner::vocabulary() {
  if (!vocabulary_)
    vocabulary_ = std::make_shared<const grammar::TokenTrie>(grammar::TokenTrie::from_tokenizer(model_.tokenizer(), kept_));
  return vocabulary_;
}

void CompletionRunner::release(Slot& slot) {
  const Generation& g = *slot.generation;
  if (slot.job->request.endpoint == Endpoint::ChatCompletions && g.not_ingested < 0 && !slot.job->cancelled)
    slot.session_text = g.rendered + g.reply;
  slot.job = nullptr;
  slot.generation.reset();
}

}  // namespace kiln
