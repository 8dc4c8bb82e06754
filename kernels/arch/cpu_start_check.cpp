// A program's start-up check (cpu_features.hpp). Compiled for the baseline of
// its architecture, like cpu_check.cpp, and run as a constructor ahead of the
// others (priority 101): before any code compiled for the wider instruction
// set. Linked into programs only (kernels/CMakeLists.txt); a model's shared
// library must not exit its host and checks in kiln_model_load instead
// (capi/cpu_gate.cpp).
#include <cstdio>
#include <cstdlib>

#include "kernels/arch/cpu_features.hpp"

namespace kiln::cpu {

namespace {

// Exits the process with one line if the CPU lacks what the kernels were compiled for.
__attribute__((constructor(101))) void check_cpu_at_start() {
  char line[512];
  if (!this_cpu_lacks(line, sizeof line)) return;
  std::fprintf(stderr, "kiln: %s\n", line);
  std::_Exit(1);
}

}  // namespace

}  // namespace kiln::cpu

// The symbol the build makes every program keep (kernels/CMakeLists.txt), so
// that this file, and with it the constructor, is linked in.
extern "C" const int kiln_cpu_check = 1;
