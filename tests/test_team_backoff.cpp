// kernels/team_backoff.hpp: a team that waits for a member too long runs
// the next passes on fewer threads, tries the full team again later, and
// stops suspecting lateness for a while when fewer threads proved no faster.
// Time is given, never read, so nothing here depends on the machine.
#include <doctest/doctest.h>

#include <chrono>

#include "kernels/team_backoff.hpp"

using kiln::kernels::TeamBackoff;
using kiln::kernels::TeamWaits;
using Clock = TeamBackoff::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

// A one-token pass of `ms` milliseconds ending at `end`, on the threads the
// backoff allows out of `wanted`, whose threads slept `asleep_ms` in all.
// Returns the threads it ran on.
int pass(TeamBackoff& b, int wanted, Clock::time_point end, int asleep_ms, int ms = 100) {
  const Clock::time_point start = end - milliseconds(ms);
  const int threads = b.threads(wanted, start);
  b.record(wanted, threads, 1, start, end, TeamWaits{asleep_ms * 1e-3});
  return threads;
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

TEST_CASE("a late team runs on one thread fewer for a period that doubles while fewer threads are faster") {
  TeamBackoff b;
  CHECK(pass(b, 2, t0, 40) == 2);  // late
  CHECK(b.threads(2, t0 + milliseconds(999)) == 1);
  CHECK(b.threads(1, t0 + milliseconds(999)) == 1);
  CHECK(pass(b, 2, t0 + milliseconds(500), 0, 60) == 1);  // fewer threads: faster than the late pass
  const Clock::time_point retry = t0 + milliseconds(1100);
  CHECK(pass(b, 2, retry, 60) == 2);  // the retry, late again: two seconds now
  CHECK(b.threads(2, retry + milliseconds(1999)) == 1);
  CHECK(b.threads(2, retry + milliseconds(2000)) == 2);
  Clock::time_point end = retry;
  Clock::duration period = seconds(2);
  for (int i = 0; i < 6; ++i) {  // 4, 8, then 8 seconds at most
    CHECK(pass(b, 2, end + period / 2, 0, 60) == 1);
    end += period + milliseconds(100);
    CHECK(pass(b, 2, end, 90) == 2);
    period = std::min<Clock::duration>(2 * period, TeamBackoff::kMaxBackoff);
    CHECK(b.threads(2, end + period - milliseconds(1)) == 1);
    CHECK(b.threads(2, end + period) == 2);
  }
}

TEST_CASE("when fewer threads prove no faster, lateness is ignored for a period that doubles") {
  TeamBackoff b;
  CHECK(pass(b, 2, t0, 40) == 2);  // late: suspected
  CHECK(pass(b, 2, t0 + milliseconds(500), 0, 150) == 1);  // but one thread is slower
  Clock::time_point end = t0 + milliseconds(1100);
  CHECK(pass(b, 2, end, 40) == 2);  // late again, but the verdict was: wrong
  CHECK(b.threads(2, end + milliseconds(1)) == 2);
  CHECK(pass(b, 2, end + seconds(14), 40) == 2);  // still distrusted
  CHECK(b.threads(2, end + seconds(14) + milliseconds(1)) == 2);
  end += TeamBackoff::kFirstDistrust;
  CHECK(pass(b, 2, end, 40) == 2);  // trusted again: backs off
  CHECK(b.threads(2, end + milliseconds(1)) == 1);
  CHECK(pass(b, 2, end + milliseconds(500), 0, 150) == 1);  // wrong again
  end += seconds(1) + milliseconds(100);
  CHECK(pass(b, 2, end, 40) == 2);
  CHECK(b.threads(2, end + 2 * TeamBackoff::kFirstDistrust - milliseconds(1)) == 2);
  CHECK(pass(b, 2, end + 2 * TeamBackoff::kFirstDistrust - milliseconds(1), 40) == 2);  // distrust doubled
  CHECK(b.threads(2, end + 2 * TeamBackoff::kFirstDistrust) == 2);
  CHECK(pass(b, 2, end + 2 * TeamBackoff::kFirstDistrust + milliseconds(100), 40) == 2);
  CHECK(b.threads(2, end + 2 * TeamBackoff::kFirstDistrust + milliseconds(101)) == 1);
}

TEST_CASE("a retry on time resets the period, and a large team steps down one thread") {
  TeamBackoff b;
  pass(b, 2, t0, 40);
  pass(b, 2, t0 + milliseconds(500), 0, 50);
  pass(b, 2, t0 + seconds(1) + milliseconds(100), 40);  // period now 4 s (fewer threads were faster)
  CHECK(b.threads(2, t0 + seconds(3)) == 1);
  pass(b, 2, t0 + seconds(6), 10);  // the retry is on time
  CHECK(b.threads(2, t0 + seconds(6)) == 2);
  pass(b, 2, t0 + seconds(7), 40);  // late: back to the first period
  CHECK(b.threads(2, t0 + seconds(7) + TeamBackoff::kFirstBackoff - milliseconds(1)) == 1);
  CHECK(b.threads(2, t0 + seconds(7) + TeamBackoff::kFirstBackoff) == 2);

  TeamBackoff big;
  pass(big, 8, t0, 200);  // seven waiting threads, 29 ms each
  CHECK(big.threads(8, t0) == 7);
  CHECK(big.threads(3, t0) == 3);  // a smaller pass is not held to the cap
}

TEST_CASE("passes of another size do not decide the verdict") {
  TeamBackoff b;
  pass(b, 2, t0, 40);  // a late one-token pass
  const Clock::time_point start = t0 + milliseconds(100);
  b.record(2, 1, 64, start, start + milliseconds(640), TeamWaits{});  // a 64-token prompt on one thread: 10 ms a token
  const Clock::time_point retry = t0 + milliseconds(1100);
  CHECK(pass(b, 2, retry, 40) == 2);  // no comparable pass: no verdict, so it backs off again (2 s)
  CHECK(b.threads(2, retry + milliseconds(1999)) == 1);
}

TEST_CASE("the verdict weighs fewer threads against the full team's recent passes, not the late one alone") {
  TeamBackoff b;
  for (int i = 0; i < 8; ++i) pass(b, 2, t0 + milliseconds(50 * i), 0, 50);  // on time, 50 ms each
  const Clock::time_point late = t0 + milliseconds(600);
  CHECK(pass(b, 2, late, 100, 200) == 2);  // one slow late pass: the average goes to 87.5 ms
  CHECK(pass(b, 2, late + milliseconds(100), 0, 95) == 1);  // faster than the late pass, slower than the average
  const Clock::time_point retry = late + TeamBackoff::kFirstBackoff + milliseconds(50);
  CHECK(pass(b, 2, retry, 20, 50) == 2);  // the verdict: a wrong suspicion
  CHECK(pass(b, 2, retry + milliseconds(250), 100, 200) == 2);  // late again, but distrusted
  CHECK(b.threads(2, retry + milliseconds(251)) == 2);
}

TEST_CASE("a backoff period also ends after its passes: a fast model tries the full team again within milliseconds") {
  TeamBackoff b;
  CHECK(pass(b, 2, t0, 1, 2) == 2);  // a late 2 ms pass
  Clock::time_point end = t0;
  for (int i = 0; i < TeamBackoff::kFirstBackoffPasses; ++i) {
    end += milliseconds(4);
    CHECK(pass(b, 2, end, 0, 4) == 1);  // one thread: slower
  }
  end += milliseconds(2);
  CHECK(b.threads(2, end - milliseconds(2)) == 2);  // well inside the second, the passes are spent
  CHECK(pass(b, 2, end, 1, 2) == 2);  // late again, but the verdict was: wrong
  CHECK(b.threads(2, end + milliseconds(1)) == 2);

  TeamBackoff longer;  // a period that doubled allows twice the passes
  pass(longer, 2, t0, 40);
  pass(longer, 2, t0 + milliseconds(500), 0, 60);  // fewer threads were faster
  const Clock::time_point retry = t0 + milliseconds(1100);
  CHECK(pass(longer, 2, retry, 60) == 2);  // late again: two seconds, 32 passes
  end = retry;
  for (int i = 0; i < 2 * TeamBackoff::kFirstBackoffPasses; ++i) {
    end += milliseconds(10);
    CHECK(pass(longer, 2, end, 0, 10) == 1);
  }
  CHECK(longer.threads(2, end) == 2);
}
