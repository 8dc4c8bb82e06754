// The command-line program every compiled model gets: flags as llama.cpp names
// them, text streamed to stdout, a timing summary on stderr.
#pragma once

#include <memory>
#include <string>

#include "engine/model.hpp"

namespace kiln {

using LoadModelFn = std::unique_ptr<Model> (*)(const std::string& gguf_path);

// `name` is the model name given to kiln_add_model; `default_gguf` the file it
// was compiled from. Returns the process exit code.
int cli_main(int argc, char** argv, const char* name, const char* default_gguf, LoadModelFn load);

}  // namespace kiln
