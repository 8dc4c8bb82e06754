// Requests' generations on the model, as the server's worker runs them: the
// prompt as tokens (a chat rendered with the model's template), ingestion that
// keeps what a slot's KV cache already holds, sampling until an
// end-of-generation token, max_tokens, a stop string or a full context, with
// the next tokens of all slots computed in one batched pass, and the text sent
// on in whole UTF-8 characters. The request's HTTP thread reads the events.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/chat/chat_template.hpp"
#include "engine/model.hpp"
#include "engine/session/session.hpp"
#include "engine/session/session_batch.hpp"
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

// What the scheduler's worker drives (apps/server/slot_scheduler.hpp): the
// requests in the slots, a step at a time. Called on the worker thread only.
class SlotWorker {
 public:
  virtual ~SlotWorker() = default;
  // Begins `job` in idle slot `slot`; the job outlives the slot's work on it.
  virtual void start(int slot, Job& job) = 0;
  // Moves every busy slot's request one token on.
  virtual void step() = 0;
  // Whether the slot still works on its job (false: idle again).
  virtual bool busy(int slot) const = 0;
};

// Runs jobs on a model in slots, each with a Session of its own (KV cache and
// tokens) that outlives the jobs: a request sharing a prefix with what its
// slot's cache holds computes only the rest. For chats, the text the cache
// stands for is remembered too, so a request that repeats the slot's previous
// conversation (reply included, as the client got it) and adds a turn keeps
// every earlier token, generated ones included, and tokenizes only the new
// turn, as -cnv does. A new request's prompt is ingested when it starts; then
// each step() is one batched forward pass (SessionBatch) over the next token
// of every generating slot, so N requests read the weights once per token,
// not N times. Each request's tokens are those of a solo run: batching does
// not change a sequence's logits.
class CompletionRunner final : public SlotWorker {
 public:
  // The forward passes run on `threads` threads.
  CompletionRunner(const Model& model, chat::ChatTemplate chat_template, int threads, int n_slots);
  ~CompletionRunner() override;
  int threads() const { return batch_.batch().threads(); }

  // Pushes Started, or one Error and stays idle; ingests the prompt and samples the first token. Never throws.
  void start(int slot, Job& job) override;
  // Pushes the text of each slot's next token, and Done with a log line on
  // stderr (prompt tokens, how many were reused and computed, tokens
  // generated) when its request ends. Never throws.
  void step() override;
  bool busy(int slot) const override;

 private:
  struct Slot;
  struct Generation;

  std::vector<int32_t> prompt_tokens(Slot& slot, const CompletionRequest& r, std::string& rendered);
  // Samples from the logits of the slot's last token and sends its text on; finishes the request when it ends.
  void advance(Slot& slot, const float* logits);
  void finish(Slot& slot);
  // After its answer (and the last token's ingestion, if any): the slot is idle.
  void release(Slot& slot);

  const Model& model_;
  chat::ChatTemplate template_;
  std::vector<std::unique_ptr<Slot>> slots_;
  SessionBatch batch_;
  size_t per_pass_;                        // slots one forward pass takes: at most max_batch()
  std::vector<SessionBatch::Part> parts_;  // of one forward pass, sized once
  std::vector<Slot*> part_slots_;
  std::vector<float> logits_;              // one row per part
};

}  // namespace kiln
