// A program's name and its --help, written from the option table.
#pragma once

#include <string>

#include "apps/options/options.hpp"

namespace kiln {

struct ModelEntry;

// "<model>", "<model>-server", ...: the name in usage lines and error messages.
std::string program_name(Program program, const ModelEntry& model);

// The usage line, what the program does, and each of its options with its
// value, help and default, wrapped to 100 columns.
std::string usage(Program program, const ModelEntry& model);

}  // namespace kiln
