// Where the time of a generated token goes: its kernel calls, each timed
// where the forward pass makes it (Sequence::time_kernels), and the rest, which
// kiln-bench reports as the per-token overhead: the measured time per token
// minus its kernels.
#pragma once

#include "engine/model.hpp"

namespace kiln {

struct TokenProfile {
  KernelTimes kernels;  // one generation step
  int pos = 0;          // the position of its token
  int runs = 0;         // timed runs it is the median of
};

// Times a one-token forward pass at position pos, on the sequence's current
// threads, a few times (as a generation step would run it, so its results
// are the same), and keeps the run with the median total. The KV cache must
// hold positions [0, pos). Costs a few tokens' time.
TokenProfile profile_token(Sequence& seq, int pos);

}  // namespace kiln
