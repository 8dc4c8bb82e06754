// Where the time of a generated token goes: its kernel calls, each timed
// where the forward pass makes it (a KernelTimer), and the rest, which
// kiln-bench reports as the per-token overhead: the measured time per token
// minus its kernels.
#pragma once

#include "engine/model/model.hpp"
#include "engine/timing/kernel_times.hpp"

namespace kiln {

// A model's Sequence::forward with every kernel call timed: the time_kernels
// of its generated header, defined in <name>_timed, which only <name>-bench
// links.
using KernelTimer = KernelTimes (*)(Sequence& seq, const int32_t* tokens, int n, int pos, Logits which, float* logits);

struct TokenProfile {
  KernelTimes kernels;  // one generation step
  int pos = 0;          // the position of its token
  int runs = 0;         // timed runs it is the median of
};

// Times a one-token forward pass at position pos, on the sequence's current
// threads, a few times (as a generation step would run it, so its results
// are the same), and keeps the run with the median total. The KV cache must
// hold positions [0, pos). Costs a few tokens' time.
TokenProfile profile_token(Sequence& seq, int pos, KernelTimer time_kernels);

}  // namespace kiln
