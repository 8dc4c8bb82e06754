// Requests' generations on the model, as the server's worker runs them:
// ingestion of the prompt that keeps what a slot's KV cache already holds or
// the prefix cache (a PrefixStore) has, sampling (masked by the request's
// grammar, if any) until an end-of-generation token, the grammar's end,
// max_tokens, a stop string or a full context, with
// the next tokens of all slots computed in one batched pass, and the text sent
// on in whole UTF-8 characters. The request's HTTP thread reads the events.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/grammar/token_trie.hpp"
#include "engine/model/model.hpp"
#include "engine/session/prefix_store.hpp"
#include "engine/session/session.hpp"
#include "engine/session/session_batch.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/reasoning.hpp"
#include "apps/server/request_prompt.hpp"
#include "apps/server/server_metrics.hpp"
#include "apps/server/token_scores.hpp"

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
  std::vector<TokenScore> scores;  // Text, with logprobs: the tokens whose text starts in this piece
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
  RequestPrompt prompt;  // made before the job is submitted (request_prompt)
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

  // For steering a waiting job (SlotScheduler): how many tokens idle slot
  // `slot` holds, and how many of them start() would keep for `job`. The
  // scheduler calls these under its lock from any thread, for idle slots
  // only. That is safe because the worker writes a slot only from start()
  // until busy() turns false, and the scheduler sees a slot idle only after
  // that and admits into it under the same lock.
  virtual size_t cached(int slot) const = 0;
  virtual size_t reusable(int slot, const Job& job) const = 0;
};

// Runs jobs on a model in slots, each with a Session of its own (KV cache and
// tokens) that outlives the jobs: a request sharing a prefix with what its
// slot's cache holds computes only the rest. For chats, the text the cache
// stands for is remembered too, so a request that repeats the slot's previous
// conversation (reply included, as the client got it) and adds a turn keeps
// every earlier token, generated ones included, and tokenizes only the new
// turn, as -cnv does. With a prefix cache, a slot's context that a new
// request would overwrite is put in it first, and a request is seeded from
// it when it holds a longer prefix of the prompt than the slot does, so a
// prompt that starts like one served before, in any slot, computes only the
// rest (within the cache's byte budget; least recently used entries go
// first); a prefix another slot's context holds now (the other choices of a
// request with n > 1) is copied from there. A chat seeded so shares its tokens as tokenized afresh: where a
// generated reply's tokens differ from its text's, reuse stops there. A new
// request's prompt is ingested when it starts; then
// each step() is one batched forward pass (SessionBatch) over the next token
// of every generating slot, so N requests read the weights once per token,
// not N times. Each request's tokens are those of a solo run: batching does
// not change a sequence's logits.
class CompletionRunner final : public SlotWorker {
 public:
  // The forward passes run on `threads` threads; the prefix cache holds up
  // to cache_bytes (0: no prefix cache). Requests and steps are counted in
  // `metrics`, which must outlive the runner. The control tokens whose pieces
  // are in `kept_tokens` (a tool-call format's markers) are written into the
  // reply's text, and grammars may ask for them. A chat's reply is read for
  // the `reasoning` block the template shows: a tool call starts only after
  // it, and a request's reasoning budget ends it.
  CompletionRunner(const Model& model, int threads, int n_slots, size_t cache_bytes, ServerMetrics& metrics,
                   const std::vector<std::string>& kept_tokens = {}, ReasoningSyntax reasoning = {});
  ~CompletionRunner() override;
  int threads() const { return batch_.batch().threads(); }

  // Pushes Started, or one Error and stays idle; ingests the prompt and samples the first token. Never throws.
  void start(int slot, Job& job) override;
  // Pushes the text of each slot's next token, and Done with a log line on
  // stderr (the slot, prompt tokens, how many were reused, from the prefix
  // cache among them, and computed, tokens generated) when its request ends.
  // Never throws.
  void step() override;
  bool busy(int slot) const override;
  size_t cached(int slot) const override;
  size_t reusable(int slot, const Job& job) const override;

 private:
  struct Slot;
  struct Generation;

  // Whether the job's chat goes on from the conversation the slot's cache holds.
  static bool continues_chat(const Slot& slot, const Job& job);
  // The job's prompt as this slot computes it: a chat that goes on from the
  // slot's conversation keeps its tokens and tokenizes only the added text.
  std::vector<int32_t> slot_prompt(const Slot& slot, const Job& job) const;
  // Before the slot takes `prompt`: puts what its context would lose in the
  // prefix cache, then gives it the longest prefix of the prompt that another
  // slot's context (the other choices of a request with n > 1, started
  // together) or the prefix cache (PrefixStore::seed) holds, if longer than
  // its own. Says how many leading prompt tokens came from where.
  struct Seeded {
    size_t tokens = 0;     // 0: none
    int from_slot = -1;    // the slot they were copied from; -1: the prefix cache
  };
  Seeded seed(Slot& slot, std::span<const int32_t> prompt);
  // Ingests the job's prompt; an echoed prompt is sent, scored with logprobs.
  std::span<const float> ingest(Slot& slot, std::span<const int32_t> prompt);
  // Sends text with the scores of the tokens whose text starts in it; `at_end`:
  // the request's last text, after which the scores of tokens a stop string cut off are dropped.
  void send(Slot& slot, const std::string& text, bool at_end);
  // Samples from the logits of the slot's last token and sends its text on; finishes the request when it ends.
  void advance(Slot& slot, const float* logits);
  void finish(Slot& slot);
  // The chat's reasoning block and budget, if the template shows reasoning.
  void follow_reasoning(Generation& g, const Job& job);
  // tool_choice auto: once the reply's content (after its reasoning) has
  // written the request's call_trigger, constrains the rest of it to the
  // request's call_grammar.
  void constrain_started_call(Generation& g, const CompletionRequest& r);
  // After its answer (and the last token's ingestion, if any): the slot is idle.
  void release(Slot& slot);
  // Tells the metrics how many positions the slots' caches hold.
  void count_kv_cells();
  // The vocabulary as grammars see it, made at the first request with one.
  std::shared_ptr<const grammar::TokenTrie> vocabulary();

  const Model& model_;
  ServerMetrics& metrics_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::optional<PrefixStore> store_;  // the prefix cache; none with --cache-ram 0
  SessionBatch batch_;
  size_t per_pass_;                        // slots one forward pass takes: at most max_batch()
  std::vector<SessionBatch::Part> parts_;  // of one forward pass, sized once
  std::vector<Slot*> part_slots_;
  std::vector<float> logits_;              // one row per part
  std::shared_ptr<const grammar::TokenTrie> vocabulary_;
  std::vector<int32_t> kept_;  // control tokens written into the text, sorted
  ReasoningSyntax reasoning_;
};

}  // namespace kiln
