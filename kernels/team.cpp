#include "kernels/team.hpp"

#include <chrono>

#include "kernels/arch/cpu_relax.hpp"

namespace kiln::kernels {

namespace detail {
TeamBarrier*& current_barrier() {
  thread_local TeamBarrier* barrier = nullptr;
  return barrier;
}
}  // namespace detail

void TeamBarrier::wait(int threads) {
  // Read before arriving: the round cannot end until this thread has arrived.
  const uint32_t phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads - 1) {
    arrived_.store(0, std::memory_order_relaxed);  // seen by all before they can arrive again
    phase_.store(phase + 1, std::memory_order_seq_cst);
    // seq_cst with the sleeper's increment and re-read below: either the
    // sleeper sees the new phase, or this sees the sleeper.
    if (sleepers_.load(std::memory_order_seq_cst) > 0) phase_.notify_all();
    return;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point arrival = Clock::now();
  const Clock::time_point give_up = arrival + std::chrono::microseconds(kSpinMicroseconds);
  for (unsigned i = 1;; ++i) {
    if (phase_.load(std::memory_order_acquire) != phase) return;
    arch::cpu_relax();
    if (i % 64 == 0 && Clock::now() > give_up) break;
  }
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (phase_.load(std::memory_order_seq_cst) == phase) phase_.wait(phase, std::memory_order_acquire);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  slept_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - arrival).count(),
                      std::memory_order_relaxed);
}

TeamWaits TeamBarrier::waits() const {
  return {static_cast<double>(slept_ns_.load(std::memory_order_relaxed)) * 1e-9};
}

}  // namespace kiln::kernels
