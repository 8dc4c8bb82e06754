// engine/model/load_threads.hpp: the threads a load may use, set around it.
#include <doctest/doctest.h>
#include <omp.h>

#include <thread>

#include "engine/model/load_threads.hpp"

using kiln::LoadThreads;

TEST_CASE("a load uses what OpenMP would start unless a LoadThreads says otherwise, and nested ones restore") {
  CHECK(LoadThreads::current() == omp_get_max_threads());
  {
    const LoadThreads one(1);
    CHECK(LoadThreads::current() == 1);
    {
      const LoadThreads three(3);
      CHECK(LoadThreads::current() == 3);
    }
    CHECK(LoadThreads::current() == 1);
    int other_thread = 0;  // the setting is the calling thread's
    std::thread([&] { other_thread = LoadThreads::current(); }).join();
    CHECK(other_thread == omp_get_max_threads());
  }
  CHECK(LoadThreads::current() == omp_get_max_threads());
  const LoadThreads none(0);  // at least one
  CHECK(LoadThreads::current() == 1);
}
