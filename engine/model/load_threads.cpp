#include "engine/model/load_threads.hpp"

#include <omp.h>

#include <algorithm>

namespace kiln {

namespace {
int& set_count() {
  thread_local int count = 0;  // 0: none set
  return count;
}
}  // namespace

LoadThreads::LoadThreads(int threads) : outer_(set_count()) { set_count() = std::max(1, threads); }

LoadThreads::~LoadThreads() { set_count() = outer_; }

int LoadThreads::current() { return set_count() > 0 ? set_count() : omp_get_max_threads(); }

}  // namespace kiln
