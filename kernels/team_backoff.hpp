// How many threads the next forward pass gets when the machine is shared.
//
// A team is only as fast as its slowest member: when another process holds
// one of the cores, the member on that core runs in time slices and the
// others wait for it at every barrier, asleep (kernels/team.hpp). On a
// 2-core machine with a busy loop on one core, tinyllama-1.1b Q4_0 then
// generated at 3-5 tokens/s on two threads against 7.5-10.8 on one
// (docs/benchmarks.md). No thread count is right for every moment, so the
// team measures, in two steps:
//
// - Suspicion: a pass whose threads waited asleep for more than kLateShare
//   of it (per waiting thread) is late, and the passes of the next backoff
//   period run on one thread fewer; the full count is tried again after it.
//   A period ends after its time or its passes, whichever come first: a
//   model that runs hundreds of passes a second would otherwise spend a
//   whole second of them on fewer threads after one late pass (a host's
//   hiccup, a team woken from sleep), where a few passes decide as well.
// - Verdict: waiting is only a sign. Threads also sleep at barriers on a
//   quiet virtual machine, when two memory-bound shares of a matrix end
//   more than the spin apart or the host briefly takes a virtual CPU, and
//   there the full team is still the faster one. So the first full-team pass
//   after a period compares the time per token the fewer threads took
//   (passes of as many tokens as the late one) with the full team's recent
//   time per token (a running average over its passes of that size, the late
//   one included): if fewer threads were not faster, the suspicion
//   was wrong, and lateness is ignored for a distrust period (kFirstDistrust,
//   doubling to kMaxDistrust while it keeps being wrong). If they were
//   faster, the next late pass backs off for twice as long (up to
//   kMaxBackoff), so a core that stays busy costs one slow pass every few
//   seconds; a retry on time resets the period.
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
  // Passes of the first period at most; a longer period allows as many
  // more as it is longer.
  static constexpr int kFirstBackoffPasses = 16;
  static constexpr Clock::duration kFirstDistrust = std::chrono::seconds(15);
  static constexpr Clock::duration kMaxDistrust = std::chrono::seconds(120);

  // The threads a pass that would use `wanted` runs on at `now`.
  int threads(int wanted, Clock::time_point now) const {
    return now < until_ && passes_left_ > 0 ? std::min(wanted, cap_) : wanted;
  }

  // Learns from a pass of `n_tokens` tokens that wanted `wanted` threads,
  // ran on `threads` (threads(wanted, start)) and lasted from `start` to `end`.
  void record(int wanted, int threads, int n_tokens, Clock::time_point start, Clock::time_point end,
              const TeamWaits& waits);

 private:
  int cap_ = INT_MAX;                          // the threads allowed until until_
  Clock::time_point until_{};                  // end of the backoff period
  int passes_left_ = 0;                        // the period's passes still to run on fewer threads
  Clock::duration backoff_ = kFirstBackoff;    // the next period's length
  Clock::time_point trust_from_{};             // lateness is ignored before this
  Clock::duration distrust_ = kFirstDistrust;  // the next distrust period's length
  // The full team's seconds per token, averaged over its recent passes of
  // full_tokens_ tokens (< 0: none yet).
  int full_tokens_ = 0;
  double full_per_token_ = -1;
  // The open comparison: the late pass's tokens, the full team's average
  // then, and the fewer threads' seconds per token on passes of as many
  // tokens (< 0: none yet).
  int trial_tokens_ = 0;
  double full_before_ = 0;
  double fewer_per_token_ = -1;
};

}  // namespace kiln::kernels
