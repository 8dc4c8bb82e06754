#include "apps/server/slot_scheduler.hpp"

#include <algorithm>

namespace kiln {

SlotScheduler::SlotScheduler(int n_slots, SlotWorker& worker)
    : worker_(worker), slots_(static_cast<size_t>(n_slots)), last_taken_(slots_.size(), 0) {
  to_start_.reserve(slots_.size());
  running_.reserve(slots_.size());
  thread_ = std::thread([this] { work(); });
}

SlotScheduler::~SlotScheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
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
    admit();
  }
  changed_.notify_all();
}

void SlotScheduler::admit() {
  while (!waiting_.empty()) {
    const int s = steer(*waiting_.front());
    if (s < 0) return;
    slots_[size_t(s)] = std::move(waiting_.front());
    waiting_.pop_front();
    last_taken_[size_t(s)] = ++taken_;
    to_start_.push_back(s);
  }
}

int SlotScheduler::steer(const Job& job) const {
  int best = -1;
  size_t best_kept = 0;
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s]) continue;
    const int slot = static_cast<int>(s);
    size_t kept = worker_.reusable(slot, job);
    if (2 * kept < worker_.cached(slot)) kept = 0;
    if (best < 0 || kept > best_kept || (kept == best_kept && last_taken_[s] < last_taken_[size_t(best)])) {
      best = slot;
      best_kept = kept;
    }
  }
  return best;
}

SlotCounts SlotScheduler::counts() const {
  std::lock_guard lock(mutex_);
  SlotCounts c;
  c.total = static_cast<int>(slots_.size());
  c.processing = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const auto& job) { return job != nullptr; }));
  c.idle = c.total - c.processing;
  c.waiting = static_cast<int>(waiting_.size());
  return c;
}

void SlotScheduler::work() {
  // The slots to start and their requests, taken out under the mutex.
  std::vector<int> started;
  std::vector<std::shared_ptr<Job>> starting;
  started.reserve(slots_.size());
  starting.reserve(slots_.size());
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !to_start_.empty() || !running_.empty(); });
    if (stopping_) return;
    started.swap(to_start_);
    to_start_.clear();
    starting.clear();
    for (int s : started) starting.push_back(slots_[static_cast<size_t>(s)]);
    lock.unlock();
    for (size_t i = 0; i < started.size(); ++i) worker_.start(started[i], *starting[i]);
    lock.lock();
    running_.insert(running_.end(), started.begin(), started.end());
    lock.unlock();
    worker_.step();
    lock.lock();
    // Slots whose request has ended are free: the longest-waiting requests take them.
    std::erase_if(running_, [&](int s) {
      if (worker_.busy(s)) return false;
      slots_[static_cast<size_t>(s)] = nullptr;
      return true;
    });
    admit();
  }
}

}  // namespace kiln
