// The entry points of lib<name>.so that must work on a CPU without what the
// library was compiled for: kiln_model_load checks the CPU before any code
// compiled for more runs, and refuses one that lacks it (NULL, and
// kiln_last_error names what is missing), where a program would exit at
// start-up (kernels/arch/cpu_start_check.cpp); a library must not exit its
// host. Compiled for the baseline of the architecture (capi/CMakeLists.txt)
// and with plain C strings only: this file must not share a template's
// instantiation with code compiled for more.
#include <cstdio>

#include "capi/kiln.h"
#include "capi/kiln_checked.hpp"
#include "kernels/arch/cpu_features.hpp"

namespace {

// What this CPU lacks, as kiln_last_error reports it, or null if nothing.
const char* cpu_lack() {
  static char line[512];
  static const bool lacks = [] {
    const int prefix = std::snprintf(line, sizeof line, "kiln_model_load: ");
    return kiln::cpu::this_cpu_lacks(line + prefix, sizeof line - static_cast<size_t>(prefix));
  }();
  return lacks ? line : nullptr;
}

thread_local bool t_refused = false;  // kiln_model_load refused this CPU on this thread

}  // namespace

extern "C" {

kiln_model* kiln_model_load(const char* gguf_path) {
  if (cpu_lack()) {
    t_refused = true;
    return nullptr;
  }
  return kiln::capi::load_model(gguf_path);
}

const char* kiln_last_error(void) {
  if (cpu_lack()) return t_refused ? cpu_lack() : "";  // nothing else ran
  return kiln::capi::last_error();
}

}  // extern "C"
