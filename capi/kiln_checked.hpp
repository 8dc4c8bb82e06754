// What capi/cpu_gate.cpp's entry points do once the CPU is known to have what
// the library was compiled for (capi/kiln.cpp): only C types cross.
#pragma once

#include "capi/kiln.h"

namespace kiln::capi {

kiln_model* load_model(const char* gguf_path);
const char* last_error();

}  // namespace kiln::capi
