// Which request runs when. A request waits for one of N slots (--parallel N);
// one worker thread runs the model for the slots. A model has one KV cache
// today, so the worker serves the occupied slots one after another, each
// request to its end, oldest first: N requests are admitted at once and their
// generations take turns, they are not batched. This file is where batching
// goes once sessions have KV caches of their own (see docs/ARCHITECTURE.md,
// "The server").
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "apps/server/completion.hpp"

namespace kiln {

struct SlotCounts {
  int total = 0;
  int idle = 0;
  int processing = 0;  // slots holding a request (one of them generating)
  int waiting = 0;     // requests waiting for a free slot
};

class SlotScheduler {
 public:
  // `run` is called on the worker thread, one job at a time, with the job's slot.
  SlotScheduler(int n_slots, std::function<void(Job&, int slot)> run);
  // Stops the worker after its current job; jobs not yet run get an Error event.
  ~SlotScheduler();

  void submit(std::shared_ptr<Job> job);
  SlotCounts counts() const;

 private:
  void work();

  std::function<void(Job&, int)> run_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::shared_ptr<Job>> slots_;  // nullptr: idle
  std::deque<int> admitted_;                 // occupied slots, oldest request first
  std::deque<std::shared_ptr<Job>> waiting_;  // for a slot
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kiln
