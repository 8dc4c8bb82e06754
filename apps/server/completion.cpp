#include "apps/server/completion.hpp"

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

CompletionRunner::CompletionRunner(const Model& model, chat::ChatTemplate chat_template, int threads)
    : model_(model), template_(std::move(chat_template)), session_(model) {
  session_.sequence().set_threads(threads);
}

void CompletionRunner::run(Job& job) {
  if (job.cancelled) {  // the client left while the request waited
    job.events.push(error_event(499, "the client closed the connection"));
    return;
  }
  std::vector<int32_t> prompt;
  std::string rendered;
  try {
    prompt = prompt_tokens(job.request, rendered);
  } catch (const RequestError& e) {
    job.events.push(error_event(e.status, e.what()));
    return;
  } catch (const std::exception& e) {
    job.events.push(error_event(500, e.what()));
    return;
  }
  try {
    generate(job, prompt, rendered);
  } catch (const std::exception& e) {  // after Started: the stream shows it
    session_text_.clear();
    job.events.push(error_event(500, e.what()));
  }
}

std::vector<int32_t> CompletionRunner::prompt_tokens(const CompletionRequest& r, std::string& rendered) {
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
    if (!session_text_.empty()) prompt = session_.tokens();
    chat::extend_rendered(tok, text, session_text_, prompt);
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

void CompletionRunner::generate(Job& job, const std::vector<int32_t>& prompt, const std::string& rendered) {
  const CompletionRequest& r = job.request;
  const Tokenizer& tok = model_.tokenizer();
  Sampler sampler(r.sampling, model_.n_vocab());
  job.events.push(CompletionEvent{CompletionEvent::Kind::Started, "", {}, 200});
  session_text_.clear();  // until the session holds this request's text

  CompletionResult result;
  result.prompt_tokens = static_cast<int>(prompt.size());
  const auto t0 = std::chrono::steady_clock::now();
  std::span<const float> logits = session_.ingest_prompt(prompt);
  result.prompt_ms = ms_since(t0);
  result.cached_tokens = session_.last_reused();
  for (int32_t t : prompt) sampler.accept(t);

  // The reply's text as it reads after the prompt (SentencePiece drops a
  // leading space only at the start of a text).
  Detokenizer detok(tok);
  for (int32_t t : prompt) detok.push(t);
  StopText stop(r.stop);
  std::string reply;            // the text of every generated token, stop strings included
  int32_t not_ingested = -1;    // the last generated token, once sampled
  result.finish_reason = "length";
  const auto t_first = std::chrono::steady_clock::now();
  while (!job.cancelled && (r.max_tokens < 0 || result.completion_tokens < r.max_tokens)) {
    if (not_ingested >= 0) {
      if (session_.n_past() >= model_.n_ctx()) break;  // the context is full
      const int32_t one[] = {not_ingested};
      logits = session_.ingest(one);
      not_ingested = -1;
    }
    const int32_t token = sampler.sample(logits.data());
    sampler.accept(token);
    if (tok.is_end_of_generation(token)) {
      result.finish_reason = "stop";
      break;
    }
    ++result.completion_tokens;
    not_ingested = token;
    const std::string piece = detok.push(token);
    reply += piece;
    const std::string out = stop.push(piece);
    if (!out.empty()) job.events.push(CompletionEvent{CompletionEvent::Kind::Text, out, {}, 200});
    if (stop.stopped()) break;
  }
  const std::string rest = detok.flush();
  reply += rest;
  std::string out = stop.push(rest);
  if (!stop.stopped()) out += stop.flush();
  if (!out.empty()) job.events.push(CompletionEvent{CompletionEvent::Kind::Text, out, {}, 200});
  if (stop.stopped()) result.finish_reason = "stop";
  if (result.completion_tokens > 0) result.generation_ms = ms_since(t_first);
  std::fprintf(stderr, "%s: %d prompt tokens, %d reused, %d computed in %.2f ms; %d generated in %.2f ms; %s%s\n",
               r.endpoint == Endpoint::ChatCompletions ? "chat" : "completion", result.prompt_tokens,
               result.cached_tokens, result.prompt_tokens - result.cached_tokens, result.prompt_ms,
               result.completion_tokens, result.generation_ms, result.finish_reason.c_str(),
               job.cancelled ? " (client gone)" : "");
  job.events.push(CompletionEvent{CompletionEvent::Kind::Done, "", result, 200});

  // After the answer: the last token joins the cache, so that a chat that
  // goes on from this reply finds all of it there.
  if (not_ingested >= 0 && session_.n_past() < model_.n_ctx()) {
    const int32_t one[] = {not_ingested};
    session_.ingest(one);
    not_ingested = -1;
  }
  if (r.endpoint == Endpoint::ChatCompletions && not_ingested < 0 && !job.cancelled) session_text_ = rendered + reply;
}

}  // namespace kiln
