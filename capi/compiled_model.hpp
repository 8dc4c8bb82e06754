// The one model a lib<name>.so serves: kiln_add_model generates the
// definition (<name>.capi.cpp, codegen/emit.cpp), which binds the C API
// (capi/kiln.cpp) to that model's load().
#pragma once

#include <memory>
#include <string>

#include "engine/model/model.hpp"

namespace kiln::capi {

// Loads the compiled model from gguf_path, or from the file it was compiled
// from when gguf_path is empty. Throws kiln::Error as load() does.
std::unique_ptr<Model> load_compiled_model(const std::string& gguf_path);

}  // namespace kiln::capi
