// How many threads the next forward pass gets when the machine is shared.
//
// A team is only as fast as its slowest member: when another process holds
// one of the cores, the member on that core runs in time slices and the
// others wait for it at every barrier, asleep (kernels/team.hpp). On a
// 2-core machine with a busy loop on one core, tinyllama-1.1b Q4_0 then
// generated at 3-5 tokens/s on two threads against 7.5-10.8 on one
// (docs/benchmarks.md). No thread count is right for every moment, so the
// team measures: after each pass, if its threads waited asleep for more than
// kLateShare of the pass (per waiting thread), the passes of the next
// backoff period run on one thread fewer, and the full count is tried again
// after it. The period starts at kFirstBackoff and doubles, up to
// kMaxBackoff, while the retries keep finding the team late, so a core that
// stays busy costs one slow pass every few seconds; a retry that finds the
// team on time resets it.
//
// Only speed depends on this: a forward pass gives the same bits on any
// number of threads, including a count that changes from pass to pass.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>

#include "kernels/team.hpp"

namespace kiln::kernels {

class TeamBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  // A team is late when its threads waited asleep for more than this share
  // of the pass each. The waiting thread's member is away for about as long
  // again, so at a half the pass the team does no more than one thread
  // alone; memory-bound passes gain less than twice from two threads, so the
  // line is drawn lower.
  static constexpr double kLateShare = 0.25;
  static constexpr Clock::duration kFirstBackoff = std::chrono::seconds(1);
  static constexpr Clock::duration kMaxBackoff = std::chrono::seconds(8);

  // The threads a pass that would use `wanted` runs on at `now`.
  int threads(int wanted, Clock::time_point now) const { return now < until_ ? std::min(wanted, cap_) : wanted; }

  // Learns from a pass on `threads` threads that ran from `start` to `end`.
  void record(int threads, Clock::time_point start, Clock::time_point end, const TeamWaits& waits);

 private:
  int cap_ = INT_MAX;                        // the threads allowed until until_
  Clock::time_point until_{};                // end of the backoff period
  Clock::duration backoff_ = kFirstBackoff;  // the next period's length
};

}  // namespace kiln::kernels
