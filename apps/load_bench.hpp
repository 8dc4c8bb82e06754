// Load time as a number (kiln-bench --load): from the moment a process of
// this program is started to the first token of an empty prompt (BOS only),
// measured from outside, in fresh processes, so that it counts what a user
// waits for: exec, the dynamic loader, mapping or reading the weights,
// building the tokenizer and the first forward pass with its page faults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/cli.hpp"

namespace kiln {

// The flag that makes a bench process one measured run (spawned by run_load_bench).
inline constexpr const char* kLoadChildFlag = "--load-child";

struct LoadBenchOptions {
  std::string model_path;  // -m, or empty for the default
  int threads = 1;
  int runs = 5;
  bool drop_caches = false;  // write 3 to /proc/sys/vm/drop_caches before each run (root only): cold starts
};

// In the spawned process: loads the model, computes the first token of an
// empty prompt, prints "<load ms> <first token ms> <peak resident bytes>" on
// stdout and returns 0.
int run_load_child(const ModelEntry& model, const std::string& model_path, int threads);

// Spawns `runs` processes of this program and prints a markdown table:
// the median time from start to first token, with the process's own load and
// first-token times and its peak resident memory (VmHWM) at that point.
void run_load_bench(const ModelEntry& model, const LoadBenchOptions& options);

}  // namespace kiln
