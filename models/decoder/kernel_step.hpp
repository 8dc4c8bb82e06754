// How the forward pass runs each kernel call. The forward templates
// (models/decoder/forward.hpp) hand every call to a `Step` policy as the kernel,
// its arguments and the kind of kernel it is:
//
//   step.run(KernelKind::Matmul, kernels::matmul<...>, w, in, out, n);
//
// `Untimed` makes the call. `Timed` makes it and measures it (a model's
// time_kernels). Codegen instantiates the one forward pass with both, so the
// kernels that are timed are the ones inference runs, listed once.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <iterator>

#include "engine/timing/kernel_times.hpp"
#include "kernels/team.hpp"

namespace kiln {

// Compiles to exactly the code of calling the kernel directly. One caveat:
// a temporary struct that the kernel takes by value (a Q8Out) is
// materialised here and copied, which moves GCC's register and stack-slot
// choices, so the forward pass names those arguments first. (The generated
// code keeps the timed instantiation in a file of its own, so it cannot sway
// the inlining choices here either; docs/ARCHITECTURE.md.)
struct Untimed {
  template <class Kernel, class... Args>
  void run(KernelKind, Kernel* kernel, const Args&... args) const {
    kernel(args...);
  }
};

// Times each call where the forward pass makes it, with the data in whatever
// cache level the previous calls left it, as in an untimed pass: a kernel
// repeated on its own would find a matrix that fits in the cache there on
// the second run, and look faster than it is in a model that does not.
// The results are those of an untimed pass.
//
// Called by every thread of the forward pass's parallel region; thread 0
// reads the clock. The barrier before a call starts the clock once all
// threads are there (for the first call, once the team has started: that is
// overhead, not the kernel's). The barrier after it makes a call that ends
// without one (Sync::NoWait) count until its last thread is done. (It also
// takes away the overlap a NoWait call has with the next in an untimed pass,
// so the calls can add up to a little more than the untimed pass.) What
// timing adds to a call's time (the second barrier, the threads leaving the
// first one at different moments, a clock read) is measured by
// timing_cost_seconds and taken off.
class Timed {
 public:
  explicit Timed(KernelTimes& times) : times_(&times) {}

  template <class Kernel, class... Args>
  void run(KernelKind kind, Kernel* kernel, const Args&... args) const {
    kernels::team_barrier();
    const auto t0 = std::chrono::steady_clock::now();
    kernel(args...);
    kernels::team_barrier();
    if (omp_get_thread_num() == 0) {
      (*times_)[kind] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++times_->calls[static_cast<int>(kind)];
    }
  }

 private:
  KernelTimes* times_;
};

// What Timed adds to the time of one call on a team of `threads`: Timed
// itself, timing calls of a kernel that does nothing (the median of a few
// batches, so that a thread being descheduled once does not count).
inline double timing_cost_seconds(int threads) {
  constexpr int kBatches = 5, kCalls = 20;
  KernelTimes batches[kBatches];
  void (*const nothing)() = [] {};
  auto time_batches = [&] {
    for (KernelTimes& batch : batches)
      for (int i = 0; i < kCalls; ++i) Timed(batch).run(KernelKind::Other, nothing);
  };
  // As the forward pass runs: one thread without a team (its barriers are free).
  if (threads == 1) {
    time_batches();
  } else {
    kernels::run_team(threads, time_batches);
  }
  double per_call[kBatches];
  for (int b = 0; b < kBatches; ++b) per_call[b] = batches[b].total() / kCalls;
  std::sort(std::begin(per_call), std::end(per_call));
  return per_call[kBatches / 2];
}

}  // namespace kiln
