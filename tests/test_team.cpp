// kernels/team.hpp: the barrier the kernels of a forward pass meet at.
#include <doctest/doctest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/team.hpp"

using kiln::kernels::run_team;
using kiln::kernels::team_barrier;
using kiln::kernels::TeamBarrier;

namespace {

// Each thread writes the round it is in, meets the others, and checks that
// every thread has written that round: no thread leaves a barrier before all
// have arrived, nor runs ahead into the next round's writes. A thread that
// sleeps past the barrier's spin now and then makes the others wait asleep.
void check_rounds(int threads, int rounds, bool late_arrivals) {
  std::vector<std::atomic<int>> round_of(static_cast<size_t>(threads));
  std::atomic<int> mismatches{0}, team_size{0};
  run_team(threads, [&] {
    const int me = omp_get_thread_num();
    team_size = omp_get_num_threads();
    for (int r = 0; r < rounds; ++r) {
      if (late_arrivals && r % 8 == me % 8)
        std::this_thread::sleep_for(std::chrono::microseconds(4 * TeamBarrier::kSpinMicroseconds));
      round_of[me].store(r, std::memory_order_relaxed);
      team_barrier();
      for (int t = 0; t < omp_get_num_threads(); ++t)
        if (round_of[t].load(std::memory_order_relaxed) != r) ++mismatches;
      team_barrier();
    }
  });
  CHECK(team_size == threads);
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("a team's barrier holds every thread until all have arrived") {
  for (int threads : {1, 2, 3, 4}) {
    CAPTURE(threads);
    check_rounds(threads, 2000, false);
  }
}

TEST_CASE("threads that arrive after the spin are woken from their sleep") {
  for (int threads : {2, 4}) {
    CAPTURE(threads);
    check_rounds(threads, 64, true);
  }
}

TEST_CASE("a team opened inside another parallel region has one thread and does not wait for more") {
  std::atomic<int> outer_threads{0}, inner_threads{0}, passed{0};
#pragma omp parallel num_threads(2)
  {
    outer_threads = omp_get_num_threads();
    run_team(2, [&] {  // nested regions are off by default: a team of one
      inner_threads = omp_get_num_threads();
      team_barrier();
      ++passed;
    });
  }
  CHECK(inner_threads == 1);
  CHECK(passed == outer_threads);
}

TEST_CASE("outside a team the barrier does nothing, also after a team has run") {
  team_barrier();
  run_team(2, [] { team_barrier(); });
  team_barrier();
  CHECK(kiln::kernels::detail::current_barrier() == nullptr);
}
