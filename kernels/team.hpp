// The team a forward pass runs on, and the barrier its kernels meet at.
//
// Every kernel shares out its work with an orphaned `#pragma omp for nowait`
// and ends with team_barrier() (kernels/sync.hpp: unless Sync::NoWait). The
// barrier is kiln's own rather than OpenMP's because of how a thread waits
// at it. libgomp's spins for about 300,000 pauses (milliseconds) before it
// sleeps, so when another process holds the core of the thread that has not
// arrived yet, the waiting one burns its own core for that long instead of
// handing it over, at every one of the ~130 barriers of a tinyllama token:
// with a busy loop on the second core of a 2-core machine, two threads
// generated at 1 token/s where one thread made 14. GOMP_SPINCOUNT and
// OMP_WAIT_POLICY are read once, when libgomp is loaded, so a program cannot
// set them for itself. TeamBarrier spins for kSpinMicroseconds, which covers
// the threads of a quiet machine arriving at slightly different moments, and
// then sleeps in the kernel (std::atomic::wait, a futex on Linux), so the
// thread that is behind can have the core. The time threads spend asleep
// there is what run_team reports (TeamWaits): how TeamBackoff
// (kernels/team_backoff.hpp) notices that a team waits for a member another
// process keeps off its core.
#pragma once

#include <omp.h>

#include <atomic>
#include <cstdint>

namespace kiln::kernels {

// What the threads of a team waited at its barriers for a member that had
// not arrived, counted only at the barriers where they gave up spinning and
// slept: a member away for microseconds does not count, one that another
// process keeps off its core for milliseconds does.
struct TeamWaits {
  double seconds = 0;  // summed over the threads, each from arriving at the barrier to waking
};

class TeamBarrier {
 public:
  // How long a thread spins before it sleeps. Long enough for the threads of
  // a quiet machine: a kernel's shares end within a few microseconds of each
  // other, and waking a sleeper costs tens of microseconds in a virtual
  // machine; short against the milliseconds a descheduled thread is away.
  static constexpr int kSpinMicroseconds = 50;

  // Returns once all `threads` threads of the team have called it.
  void wait(int threads);

  // The waits of every thread that slept at this barrier so far.
  TeamWaits waits() const;

 private:
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint32_t> phase_{0};  // rounds completed
  std::atomic<int> sleepers_{0};                // threads in phase_.wait
  std::atomic<int64_t> slept_ns_{0};            // TeamWaits::seconds, in nanoseconds
};

namespace detail {
// The barrier of the run_team region this thread is in, or null.
TeamBarrier*& current_barrier();
}  // namespace detail

// The barrier that ends a kernel: all threads of the team meet. In a
// run_team region it is the region's TeamBarrier; in any other parallel
// region OpenMP's; outside one (a single thread) it does nothing.
inline void team_barrier() {
  if (TeamBarrier* barrier = detail::current_barrier()) {
    barrier->wait(omp_get_num_threads());
  } else {
#pragma omp barrier
  }
}

// Runs f on a team of `threads` threads (an OpenMP parallel region), whose
// kernels meet at one TeamBarrier, and returns what they waited there. The
// team may get fewer threads than asked (nested in another region,
// OMP_THREAD_LIMIT); the barrier counts those it has.
template <class F>
TeamWaits run_team(int threads, F&& f) {
  TeamBarrier barrier;
#pragma omp parallel num_threads(threads)
  {
    TeamBarrier*& current = detail::current_barrier();
    TeamBarrier* const outer = current;
    current = &barrier;
    f();
    current = outer;
  }
  return barrier.waits();
}

}  // namespace kiln::kernels
