// Which request runs when. A request waits for one of N slots (--parallel N);
// one worker thread drives the slots' requests through a SlotWorker
// (apps/server/completion.hpp): it starts each newly admitted request, then
// steps all of them together, one token each per step (the CompletionRunner
// computes those tokens in one batched forward pass), and frees a slot as soon
// as its request has ended; the longest-waiting request takes it.
//
// Which idle slot a request takes (steering): the one whose KV cache already
// holds the longest prefix of its prompt, so that a request that repeats a
// system prompt or goes on with a conversation finds it without the prefix
// cache. A slot counts only if the request keeps at least half of what it
// holds, since the rest is overwritten (a shared BOS or chat header alone does
// not make a slot worth taking); of equals, and when none counts, the slot
// least recently taken, so that recent caches last. The request's tokens are
// made on its HTTP thread before it is submitted (request_prompt.hpp), so
// choosing compares token lists under the mutex and never tokenizes there.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "apps/server/completion.hpp"

namespace kiln {

struct SlotCounts {
  int total = 0;
  int idle = 0;
  int processing = 0;  // slots holding a request
  int waiting = 0;     // requests waiting for a free slot
};

class SlotScheduler {
 public:
  // `worker` is used on the scheduler's worker thread only, and must outlive the scheduler.
  SlotScheduler(int n_slots, SlotWorker& worker);
  // Stops the worker after its current step; jobs not yet done get an Error event.
  ~SlotScheduler();

  void submit(std::shared_ptr<Job> job);
  SlotCounts counts() const;

 private:
  void work();
  // Puts waiting requests into idle slots, to be started. Under the mutex.
  void admit();
  // The idle slot for `job` (see above), or -1 if none is idle. Under the mutex.
  int steer(const Job& job) const;

  SlotWorker& worker_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::shared_ptr<Job>> slots_;  // nullptr: idle
  std::vector<uint64_t> last_taken_;         // per slot: when a request last took it (0: never)
  uint64_t taken_ = 0;                       // requests admitted so far
  std::vector<int> to_start_;                // admitted slots whose request the worker has not started
  std::vector<int> running_;                 // slots whose request the worker has started
  std::deque<std::shared_ptr<Job>> waiting_;  // for a slot
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kiln
