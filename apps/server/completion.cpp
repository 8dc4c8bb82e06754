#include "apps/server/completion.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/chat/chat_prompt.hpp"
#include "engine/grammar/grammar_constraint.hpp"
#include "apps/server/reasoning_block.hpp"
#include "apps/server/reasoning_budget.hpp"
#include "apps/server/stop_text.hpp"
#include "engine/timing/elapsed.hpp"
#include "engine/error/error.hpp"

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
  Seeded seeded;               // of the prompt tokens reused, those another slot or the prefix cache gave (for the log)
  std::vector<TokenScore> unsent_scores;  // with logprobs: of generated tokens whose text is not sent yet
  size_t echoed = 0;          // bytes of the echoed prompt before the reply
  size_t sent = 0;            // bytes of text sent, the echoed prompt included
  int32_t not_ingested = -1;  // the last generated token, once sampled
  bool done = false;          // Done is sent; only not_ingested is left to ingest
  int widest_step = 1;        // the most sequences a step of this request's computed together (for the log)
  size_t trigger_from = 0;    // where in `reply` the request's call_trigger may still begin
  bool call_started = false;  // the reply wrote the call_trigger: the rest follows call_grammar
  std::optional<ReasoningBlock> reasoning;  // a chat's, where the template shows reasoning
  std::optional<ReasoningBudget> budget;    // with a reasoning budget
  std::chrono::steady_clock::time_point first_token;
};

CompletionRunner::CompletionRunner(const Model& model, int threads, int n_slots, size_t cache_bytes,
                                   ServerMetrics& metrics, const std::vector<std::string>& kept_tokens,
                                   ReasoningSyntax reasoning)
    : model_(model), metrics_(metrics), batch_(model), per_pass_(std::min(size_t(n_slots), size_t(model.max_batch()))),
      reasoning_(std::move(reasoning)) {
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
  return slot.session.reusable_prefix(job.prompt.tokens);
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

CompletionRunner::Seeded CompletionRunner::seed(Slot& slot, std::span<const int32_t> prompt) {
  const size_t own = slot.session.reusable_prefix(prompt);
  const Slot* donor = nullptr;
  size_t donor_length = own;
  for (const auto& other : slots_) {
    const size_t length = other.get() == &slot ? 0 : other->session.reusable_prefix(prompt);
    if (length > donor_length) {
      donor = other.get();
      donor_length = length;
    }
  }
  // Taken before seeding overwrites the cache, stored after, so that storing
  // it cannot evict the entry that seeds this prompt.
  std::optional<SessionState> displaced;
  if (store_ && own < slot.session.tokens().size()) displaced = slot.session.snapshot();
  if (donor) slot.session.restore_prefix(donor->session.snapshot(donor_length), prompt);
  // The store restores only what is longer than the session now holds.
  const size_t held = store_ ? store_->seed(slot.session, prompt) : donor_length;
  if (displaced) store_->put(std::move(*displaced));
  if (held > donor_length) return {held, -1};
  return donor ? Seeded{donor_length, donor->index} : Seeded{};
}

std::span<const float> CompletionRunner::ingest(Slot& slot, std::span<const int32_t> prompt) {
  Generation& g = *slot.generation;
  const CompletionRequest& r = slot.job->request;
  const Tokenizer& tok = model_.tokenizer();
  // The reply's text as it reads after the prompt (SentencePiece drops a
  // leading space only at the start of a text), and where each prompt
  // token's text starts in it.
  std::vector<size_t> offsets;
  offsets.reserve(prompt.size());
  std::string decoded;
  for (int32_t t : prompt) {
    g.sampler.accept(t);
    offsets.push_back(decoded.size());
    decoded += g.detok.push(t);
  }
  // The branch point counts in the job's own tokens: kept if a chat's
  // continuation of the slot's tokens shares them.
  const std::vector<int32_t>& own = slot.job->prompt.tokens;
  const size_t at = slot.job->prompt.branch_point;
  const size_t checkpoint_at =
      at <= prompt.size() && std::equal(own.begin(), own.begin() + std::ptrdiff_t(at), prompt.begin()) ? at : 0;
  if (!r.echo) return slot.session.ingest_prompt(prompt, checkpoint_at);
  std::vector<TokenScore> scores;
  std::span<const float> logits;
  if (r.logprobs) {
    // Position i's logits score token i + 1; the first token has no score.
    scores.push_back(unscored_token(tok, prompt[0]));
    logits = slot.session.ingest_every_position(prompt, [&](size_t i, std::span<const float> row) {
      if (i + 1 < prompt.size()) scores.push_back(score_token(tok, row, prompt[i + 1], r.top_logprobs, offsets[i + 1]));
    });
  } else {
    logits = slot.session.ingest_prompt(prompt, checkpoint_at);
  }
  // A prompt of token ids echoes as their text.
  const std::string& echoed = r.prompt_tokens.empty() ? r.prompt : decoded;
  g.echoed = g.sent = echoed.size();
  slot.job->events.push(CompletionEvent{CompletionEvent::Kind::Text, echoed, std::move(scores), {}, 200});
  return logits;
}

void CompletionRunner::send(Slot& slot, const std::string& text, bool at_end) {
  Generation& g = *slot.generation;
  g.sent += text.size();
  std::vector<TokenScore>& unsent = g.unsent_scores;
  const auto ready = at_end && !g.stop.stopped()
                         ? unsent.end()
                         : std::find_if(unsent.begin(), unsent.end(),
                                        [&](const TokenScore& s) { return s.text_offset >= g.sent; });
  CompletionEvent e{CompletionEvent::Kind::Text, text, {}, {}, 200};
  e.scores.assign(std::make_move_iterator(unsent.begin()), std::make_move_iterator(ready));
  unsent.erase(unsent.begin(), at_end ? unsent.end() : ready);
  if (!text.empty() || !e.scores.empty()) slot.job->events.push(std::move(e));
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
  job.events.push(CompletionEvent{CompletionEvent::Kind::Started, "", {}, {}, 200});
  slot.session_text.clear();  // until the session holds this request's text
  slot.job = &job;
  try {
    slot.generation = std::make_unique<Generation>(model_, job.request);
    Generation& g = *slot.generation;
    if (job.request.grammar)
      g.sampler.constrain(std::make_unique<grammar::GrammarConstraint>(job.request.grammar, vocabulary()));
    g.rendered = job.prompt.rendered.str();
    follow_reasoning(g, job);
    g.result.prompt_tokens = static_cast<int>(prompt.size());
    g.result.finish_reason = "length";
    const auto t0 = std::chrono::steady_clock::now();
    g.seeded = seed(slot, prompt);
    const std::span<const float> logits = ingest(slot, prompt);
    g.result.prompt_ms = ms_since(t0);
    g.result.cached_tokens = slot.session.last_reused();
    g.seeded.tokens = std::min(g.seeded.tokens, static_cast<size_t>(g.result.cached_tokens));
    count_kv_cells();
    g.first_token = std::chrono::steady_clock::now();
    if (job.request.max_tokens == 0) return finish(slot);  // only the echoed prompt, scored
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
      metrics_.decoded(static_cast<int>(parts_.size()));
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
  count_kv_cells();
}

void CompletionRunner::advance(Slot& slot, const float* logits) {
  Generation& g = *slot.generation;
  const CompletionRequest& r = slot.job->request;
  const Tokenizer& tok = model_.tokenizer();
  int32_t token = 0;
  try {
    const std::optional<int32_t> forced = g.budget ? g.budget->forced_token() : std::nullopt;
    token = forced ? *forced : g.sampler.sample(logits);
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
  if (r.logprobs)
    g.unsent_scores.push_back(score_token(tok, {logits, size_t(model_.n_vocab())}, token, r.top_logprobs,
                                          g.echoed + g.reply.size()));
  const std::string piece = std::binary_search(kept_.begin(), kept_.end(), token)
                                ? g.detok.flush() + std::string(tok.piece(token))
                                : g.detok.push(token);
  g.reply += piece;
  if (g.reasoning) {
    const bool was_inside = g.reasoning->inside();
    g.reasoning->update(g.reply);
    if (g.budget) g.budget->counted(was_inside, g.reasoning->inside(), tok.text(token));
  }
  send(slot, g.stop.push(piece), false);
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
  send(slot, out, true);
  if (g.stop.stopped()) g.result.finish_reason = "stop";
  if (g.result.completion_tokens > 0) g.result.generation_ms = ms_since(g.first_token);
  const std::string from_cache =
      g.seeded.tokens == 0     ? std::string()
      : g.seeded.from_slot < 0 ? " (" + std::to_string(g.seeded.tokens) + " from the prefix cache)"
                               : " (" + std::to_string(g.seeded.tokens) + " from slot " + std::to_string(g.seeded.from_slot) + ")";
  std::fprintf(stderr, "slot %d: %s: %d prompt tokens, %d reused%s, %d computed in %.2f ms; %d generated in %.2f ms, in "
               "steps of up to %d sequences; %s%s\n",
               slot.index, r.endpoint == Endpoint::ChatCompletions ? "chat" : "completion", g.result.prompt_tokens,
               g.result.cached_tokens, from_cache.c_str(), g.result.prompt_tokens - g.result.cached_tokens, g.result.prompt_ms,
               g.result.completion_tokens, g.result.generation_ms, g.widest_step, g.result.finish_reason.c_str(),
               job.cancelled ? " (client gone)" : "");
  metrics_.request_done(g.result, g.seeded.tokens > 0 && g.seeded.from_slot < 0);
  job.events.push(CompletionEvent{CompletionEvent::Kind::Done, "", {}, g.result, 200});
  g.done = true;
  // A last token that the context has no room for is never ingested.
  if (g.not_ingested >= 0 && slot.session.n_past() >= model_.n_ctx()) return release(slot);
  if (g.not_ingested < 0) release(slot);
}

void CompletionRunner::follow_reasoning(Generation& g, const Job& job) {
  const CompletionRequest& r = job.request;
  if (r.endpoint != Endpoint::ChatCompletions || reasoning_.empty()) return;
  const bool starts_inside = starts_in_reasoning(reasoning_, g.rendered);
  g.reasoning.emplace(reasoning_, starts_inside);
  // A constrained reply has no reasoning (request_prompt), and its grammar would refuse forced tokens.
  if (r.reasoning_budget < 0 || r.grammar) return;
  // The text goes on from the reply's: no SentencePiece space before it.
  const std::string forced = r.reasoning_budget_message.value_or("") + reasoning_.close;
  g.budget.emplace(r.reasoning_budget,
                   model_.tokenizer().encode(forced, /*add_special=*/false, [](size_t, size_t) { return true; },
                                             /*continues=*/true),
                   starts_inside);
}

void CompletionRunner::constrain_started_call(Generation& g, const CompletionRequest& r) {
  const size_t content_from = g.reasoning ? g.reasoning->content_from() : 0;
  if (content_from == std::string::npos) return;  // a marker in the reasoning starts no call
  const size_t at = g.reply.find(r.call_trigger, std::max(g.trigger_from, content_from));
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

void CompletionRunner::count_kv_cells() {
  size_t cells = 0;
  for (const auto& slot : slots_) cells += slot->session.tokens().size();
  metrics_.set_kv_cells_used(cells);
}

}  // namespace kiln
