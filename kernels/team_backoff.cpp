#include "kernels/team_backoff.hpp"

#include <algorithm>

namespace kiln::kernels {

void TeamBackoff::record(int threads, Clock::time_point start, Clock::time_point end, const TeamWaits& waits) {
  if (threads < 2) return;
  const double pass = std::chrono::duration<double>(end - start).count();
  if (waits.seconds > kLateShare * pass * (threads - 1)) {
    cap_ = threads - 1;
    until_ = end + backoff_;
    backoff_ = std::min(2 * backoff_, kMaxBackoff);
  } else if (threads > cap_) {
    backoff_ = kFirstBackoff;  // the full team, on time
  }
}

}  // namespace kiln::kernels
