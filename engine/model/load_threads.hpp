// The threads loading a model from a GGUF may use to rearrange its quantized
// matrices (LoadedWeights::matrix): the count the program will run on (-t),
// which it sets around its load with a LoadThreads; without one, as many as
// OpenMP would start. Loading on more threads than the program was given
// would take cores the user kept for something else, and wait for them when
// another process holds them (kernels/team.hpp).
#pragma once

namespace kiln {

class LoadThreads {
 public:
  // Sets the count for the loads the calling thread makes while this lives.
  explicit LoadThreads(int threads);
  ~LoadThreads();
  LoadThreads(const LoadThreads&) = delete;
  LoadThreads& operator=(const LoadThreads&) = delete;

  // The calling thread's count now (at least 1).
  static int current();

 private:
  int outer_;  // the count before this one (0: none set)
};

}  // namespace kiln
