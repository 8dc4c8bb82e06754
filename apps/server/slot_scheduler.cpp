#include "apps/server/slot_scheduler.hpp"

namespace kiln {

SlotScheduler::SlotScheduler(int n_slots, std::function<void(Job&, int)> run)
    : run_(std::move(run)), slots_(static_cast<size_t>(n_slots)) {
  worker_ = std::thread([this] { work(); });
}

SlotScheduler::~SlotScheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
  CompletionEvent stopped;
  stopped.status = 503;
  stopped.text = "the server is shutting down";
  for (const auto& job : slots_)
    if (job) job->events.push(stopped);
  for (const auto& job : waiting_) job->events.push(stopped);
}

void SlotScheduler::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mutex_);
    waiting_.push_back(std::move(job));
    for (size_t s = 0; s < slots_.size() && !waiting_.empty(); ++s)
      if (!slots_[s]) {
        slots_[s] = std::move(waiting_.front());
        waiting_.pop_front();
        admitted_.push_back(static_cast<int>(s));
      }
  }
  changed_.notify_all();
}

SlotCounts SlotScheduler::counts() const {
  std::lock_guard lock(mutex_);
  SlotCounts c;
  c.total = static_cast<int>(slots_.size());
  c.processing = static_cast<int>(admitted_.size());
  c.idle = c.total - c.processing;
  c.waiting = static_cast<int>(waiting_.size());
  return c;
}

void SlotScheduler::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !admitted_.empty(); });
    if (stopping_) return;
    const int slot = admitted_.front();
    const std::shared_ptr<Job> job = slots_[static_cast<size_t>(slot)];
    lock.unlock();
    run_(*job, slot);
    lock.lock();
    // The slot is free: the longest-waiting request takes it.
    admitted_.pop_front();
    slots_[static_cast<size_t>(slot)] = nullptr;
    if (!waiting_.empty()) {
      slots_[static_cast<size_t>(slot)] = std::move(waiting_.front());
      waiting_.pop_front();
      admitted_.push_back(slot);
    }
  }
}

}  // namespace kiln
