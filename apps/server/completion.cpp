#include "apps/server/completion.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/chat/chat_prompt.hpp"
#include "engine/error.hpp"
#include "apps/cli_chat.hpp"
#include "apps/server/stop_text.hpp"
#include "engine/elapsed.hpp"

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
  explicit Slot(const Model& model) : session(model) {}
  Session session;
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
  int32_t not_ingested = -1;  // the last generated token, once sampled
  bool done = false;          // Done is sent; only not_ingested is left to ingest
  int widest_step = 1;        // the most sequences a step of this request's computed together (for the log)
  std::chrono::steady_clock::time_point first_token;
};

CompletionRunner::CompletionRunner(const Model& model, chat::ChatTemplate chat_template, int threads, int n_slots)
    : model_(model), template_(std::move(chat_template)), batch_(model),
      per_pass_(std::min(size_t(n_slots), size_t(model.max_batch()))) {
  for (int i = 0; i < n_slots; ++i) {
    slots_.push_back(std::make_unique<Slot>(model));
    slots_.back()->session.sequence().set_threads(threads);
  }
  batch_.batch().set_threads(threads);
  parts_.reserve(per_pass_);
  part_slots_.reserve(per_pass_);
  logits_.resize(per_pass_ * size_t(model.n_vocab()));
}

CompletionRunner::~CompletionRunner() = default;

bool CompletionRunner::busy(int slot) const { return slots_[size_t(slot)]->job != nullptr; }

void CompletionRunner::start(int slot_index, Job& job) {
  Slot& slot = *slots_[size_t(slot_index)];
  if (job.cancelled) {  // the client left while the request waited
    job.events.push(error_event(499, "the client closed the connection"));
    return;
  }
  std::vector<int32_t> prompt;
  std::string rendered;
  try {
    prompt = prompt_tokens(slot, job.request, rendered);
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
    g.rendered = std::move(rendered);
    g.result.prompt_tokens = static_cast<int>(prompt.size());
    g.result.finish_reason = "length";
    const auto t0 = std::chrono::steady_clock::now();
    const std::span<const float> logits = slot.session.ingest_prompt(prompt);
    g.result.prompt_ms = ms_since(t0);
    g.result.cached_tokens = slot.session.last_reused();
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

std::vector<int32_t> CompletionRunner::prompt_tokens(Slot& slot, const CompletionRequest& r, std::string& rendered) {
  const Tokenizer& tok = model_.tokenizer();
  std::vector<int32_t> prompt;
  if (r.endpoint == Endpoint::ChatCompletions) {
    chat::Array messages;
    for (const ChatMessage& m : r.messages) messages.push_back(chat::chat_message(m.role, m.content));
    chat::Text text;
    try {
      text = template_.render(chat::reply_inputs(tok, std::move(messages), local_now()));
    } catch (const Error& e) {  // the template refused the conversation (raise_exception) or could not render it
      throw RequestError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
    }
    if (!slot.session_text.empty()) prompt = slot.session.tokens();
    chat::extend_rendered(tok, text, slot.session_text, prompt);
    rendered = text.str();
  } else {
    // Special-token text in a prompt is read as that token, as llama.cpp and the program's -p do.
    prompt = tok.encode(r.prompt, /*add_special=*/true, /*parse_special=*/true);
  }
  if (prompt.empty()) throw RequestError(400, "the prompt encodes to no tokens", "prompt");
  try {
    check_prompt_fits(model_, prompt.size());
  } catch (const Error& e) {
    throw RequestError(400, e.what(), r.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt");
  }
  return prompt;
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
  const int32_t token = g.sampler.sample(logits);
  g.sampler.accept(token);
  if (tok.is_end_of_generation(token)) {
    g.result.finish_reason = "stop";
    return finish(slot);
  }
  ++g.result.completion_tokens;
  g.not_ingested = token;
  const std::string piece = g.detok.push(token);
  g.reply += piece;
  const std::string out = g.stop.push(piece);
  if (!out.empty()) slot.job->events.push(CompletionEvent{CompletionEvent::Kind::Text, out, {}, 200});
  const bool at_max = r.max_tokens >= 0 && g.result.completion_tokens >= r.max_tokens;
  if (g.stop.stopped() || slot.job->cancelled || at_max || slot.session.n_past() >= model_.n_ctx()) finish(slot);
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
  std::fprintf(stderr, "%s: %d prompt tokens, %d reused, %d computed in %.2f ms; %d generated in %.2f ms, in steps of up to "
               "%d sequences; %s%s\n",
               r.endpoint == Endpoint::ChatCompletions ? "chat" : "completion", g.result.prompt_tokens,
               g.result.cached_tokens, g.result.prompt_tokens - g.result.cached_tokens, g.result.prompt_ms,
               g.result.completion_tokens, g.result.generation_ms, g.widest_step, g.result.finish_reason.c_str(),
               job.cancelled ? " (client gone)" : "");
  job.events.push(CompletionEvent{CompletionEvent::Kind::Done, "", g.result, 200});
  g.done = true;
  // A last token that the context has no room for is never ingested.
  if (g.not_ingested >= 0 && slot.session.n_past() >= model_.n_ctx()) return release(slot);
  if (g.not_ingested < 0) release(slot);
}

void CompletionRunner::release(Slot& slot) {
  const Generation& g = *slot.generation;
  if (slot.job->request.endpoint == Endpoint::ChatCompletions && g.not_ingested < 0 && !slot.job->cancelled)
    slot.session_text = g.rendered + g.reply;
  slot.job = nullptr;
  slot.generation.reset();
}

}  // namespace kiln
