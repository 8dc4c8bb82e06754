// Where a compiled model finds its GGUF when it has no weights built in and
// is given no path (no -m): the way a user expects a program to find its
// data, not only the folder of the machine that built it.
#pragma once

#include <string>

namespace kiln {

// The environment variable that names a model's GGUF.
inline constexpr const char* kModelPathVariable = "KILN_MODEL_PATH";

// In this order:
//   1. $KILN_MODEL_PATH, if set (then it must exist);
//   2. <the running program's folder>/<file_name>: the GGUF shipped next to
//      the program, under the name of the file the model was compiled from;
//   3. build_path: that file where it was at build time.
// Throws kiln::Error, one line saying what was tried, when none exists.
std::string default_model_path(const std::string& file_name, const std::string& build_path);

// The same with the environment and the program's folder given (empty
// program_dir: unknown). env_value is null when the variable is unset.
std::string resolve_model_path(const char* env_value, const std::string& program_dir, const std::string& file_name,
                               const std::string& build_path);

}  // namespace kiln
