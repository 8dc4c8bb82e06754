#include "kernels/team_backoff.hpp"

#include <algorithm>

namespace kiln::kernels {

void TeamBackoff::record(int wanted, int threads, int n_tokens, Clock::time_point start, Clock::time_point end,
                         const TeamWaits& waits) {
  const double seconds = std::chrono::duration<double>(end - start).count();
  const double per_token = seconds / std::max(n_tokens, 1);
  if (threads < wanted) {  // backing off: how fast fewer threads are
    --passes_left_;
    if (n_tokens == trial_tokens_)
      fewer_per_token_ = fewer_per_token_ < 0 ? per_token : (fewer_per_token_ + per_token) / 2;
    return;
  }
  if (threads < 2) return;
  // The full team's recent time per token, on passes of one size.
  if (n_tokens != full_tokens_ || full_per_token_ < 0) {
    full_tokens_ = n_tokens;
    full_per_token_ = per_token;
  } else {
    full_per_token_ += (per_token - full_per_token_) / 4;
  }
  if (trial_tokens_ > 0 && fewer_per_token_ >= 0) {  // the verdict on the last backoff
    if (fewer_per_token_ >= full_before_) {          // fewer threads were no faster: a wrong suspicion
      trust_from_ = end + distrust_;
      distrust_ = std::min(2 * distrust_, kMaxDistrust);
      backoff_ = kFirstBackoff;
    } else {
      distrust_ = kFirstDistrust;
    }
    trial_tokens_ = 0;
  }
  const bool late = waits.seconds > kLateShare * seconds * (threads - 1);
  if (!late) {
    backoff_ = kFirstBackoff;  // the full team, on time
    return;
  }
  if (end < trust_from_) return;
  cap_ = threads - 1;
  until_ = end + backoff_;
  passes_left_ = static_cast<int>(kFirstBackoffPasses * (backoff_ / kFirstBackoff));
  backoff_ = std::min(2 * backoff_, kMaxBackoff);
  trial_tokens_ = n_tokens;
  full_before_ = full_per_token_;
  fewer_per_token_ = -1;
}

}  // namespace kiln::kernels
