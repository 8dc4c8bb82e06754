// One request's generation on the model, as the server's worker runs it: the
// prompt as tokens (a chat rendered with the model's template), ingestion that
// keeps what the KV cache already holds, sampling until an end-of-generation
// token, max_tokens, a stop string or a full context, and the text sent on in
// whole UTF-8 characters. The request's HTTP thread reads the events.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "engine/chat/chat_template.hpp"
#include "engine/model.hpp"
#include "engine/session/session.hpp"
#include "apps/server/openai_request.hpp"

namespace kiln {

struct CompletionResult {
  int prompt_tokens = 0;
  int cached_tokens = 0;  // prompt tokens the KV cache already held (not computed)
  int completion_tokens = 0;
  std::string finish_reason;  // "stop": end-of-generation token or stop string; "length": max_tokens or context
  double prompt_ms = 0;       // computing the prompt's new tokens
  double generation_ms = 0;   // from the prompt's logits to the last generated token
};

// What the worker tells the request's thread: Started (the prompt fits),
// then Text pieces, then Done; or a single Error instead.
struct CompletionEvent {
  enum class Kind { Started, Text, Done, Error } kind = Kind::Error;
  std::string text;         // Text: the next piece; Error: the message
  CompletionResult result;  // Done
  int status = 500;         // Error: the HTTP status
};

// Events from the worker to the request's thread, in order.
class EventQueue {
 public:
  void push(CompletionEvent e);
  CompletionEvent pop();  // waits for the next event

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<CompletionEvent> events_;
};

struct Job {
  CompletionRequest request;
  EventQueue events;
  std::atomic<bool> cancelled{false};  // the client went away: stop at the next token
};

// Runs jobs on a model, one at a time, with the model's one KV cache in a
// Session that outlives them: a request sharing a prefix with what the cache
// holds computes only the rest. For chats, the text the cache stands for is
// remembered too, so a request that repeats the previous conversation (reply
// included, as the client got it) and adds a turn keeps every earlier token,
// generated ones included, and tokenizes only the new turn, as -cnv does.
class CompletionRunner {
 public:
  // The session's forward passes run on `threads` threads.
  CompletionRunner(const Model& model, chat::ChatTemplate chat_template, int threads);
  int threads() const { return session_.sequence().threads(); }

  // Pushes the job's events and logs one line on stderr (prompt tokens,
  // how many were reused and computed, tokens generated); never throws.
  void run(Job& job);

 private:
  std::vector<int32_t> prompt_tokens(const CompletionRequest& r, std::string& rendered);
  void generate(Job& job, const std::vector<int32_t>& prompt, const std::string& rendered);

  const Model& model_;
  chat::ChatTemplate template_;
  Session session_;
  // The rendered chat text the session's tokens stand for (the last chat's
  // prompt and reply); empty when they stand for none (after a plain
  // completion, a cancelled request, an error).
  std::string session_text_;
};

}  // namespace kiln
