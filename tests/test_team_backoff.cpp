// kernels/team_backoff.hpp: a team that waits for a member too long runs
// the next passes on fewer threads, and tries the full team again later.
// Time is given, never read, so nothing here depends on the machine.
#include <doctest/doctest.h>

#include <chrono>

#include "kernels/team_backoff.hpp"

using kiln::kernels::TeamBackoff;
using kiln::kernels::TeamWaits;
using Clock = TeamBackoff::Clock;
using std::chrono::milliseconds;

namespace {

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

// A pass of 100 ms ending at `end` whose threads slept `asleep_ms` in all.
void pass(TeamBackoff& b, int threads, Clock::time_point end, int asleep_ms) {
  b.record(threads, end - milliseconds(100), end, TeamWaits{asleep_ms * 1e-3});
}

}  // namespace

TEST_CASE("a team that waits little keeps its threads") {
  TeamBackoff b;
  CHECK(b.threads(2, t0) == 2);
  pass(b, 2, t0, 24);  // just under kLateShare of the pass
  CHECK(b.threads(2, t0 + milliseconds(1)) == 2);
  pass(b, 4, t0, 70);  // three waiting threads, under a quarter each
  CHECK(b.threads(4, t0 + milliseconds(1)) == 4);
}

TEST_CASE("a late team runs on one thread fewer for a period that doubles while retries are late") {
  TeamBackoff b;
  pass(b, 2, t0, 40);
  CHECK(b.threads(2, t0 + milliseconds(999)) == 1);
  CHECK(b.threads(1, t0 + milliseconds(999)) == 1);
  CHECK(b.threads(2, t0 + milliseconds(1000)) == 2);  // the retry
  pass(b, 1, t0 + milliseconds(500), 0);              // passes on one thread teach nothing
  const Clock::time_point retry = t0 + milliseconds(1000);
  pass(b, 2, retry, 60);  // late again: two seconds now
  CHECK(b.threads(2, retry + milliseconds(1999)) == 1);
  CHECK(b.threads(2, retry + milliseconds(2000)) == 2);
  Clock::time_point end = retry;
  Clock::duration period = std::chrono::seconds(2);
  for (int i = 0; i < 6; ++i) {  // 4, 8, then 8 seconds at most
    end += period;
    pass(b, 2, end, 90);
    period = std::min<Clock::duration>(2 * period, TeamBackoff::kMaxBackoff);
    CHECK(b.threads(2, end + period - milliseconds(1)) == 1);
    CHECK(b.threads(2, end + period) == 2);
  }
}

TEST_CASE("a retry on time resets the period, and a large team steps down one thread at a time") {
  TeamBackoff b;
  pass(b, 2, t0, 40);
  pass(b, 2, t0 + std::chrono::seconds(1), 40);  // period now 4 s
  pass(b, 2, t0 + std::chrono::seconds(3), 10);  // the retry is on time
  CHECK(b.threads(2, t0 + std::chrono::seconds(3)) == 2);
  pass(b, 2, t0 + std::chrono::seconds(4), 40);  // late: back to the first period
  CHECK(b.threads(2, t0 + std::chrono::seconds(4) + TeamBackoff::kFirstBackoff - milliseconds(1)) == 1);
  CHECK(b.threads(2, t0 + std::chrono::seconds(4) + TeamBackoff::kFirstBackoff) == 2);

  TeamBackoff big;
  pass(big, 8, t0, 200);  // seven waiting threads, 29 ms each
  CHECK(big.threads(8, t0) == 7);
  CHECK(big.threads(3, t0) == 3);  // a smaller pass is not held to the cap
  pass(big, 7, t0 + milliseconds(100), 200);
  CHECK(big.threads(8, t0 + milliseconds(100)) == 6);
}
