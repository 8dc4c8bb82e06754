// Reading a program's command line with the option table.
#pragma once

#include <optional>

#include "apps/options/options.hpp"

namespace kiln {

struct ModelEntry;

// The options argv gives `program`: each flag read as the table says, then
// the rules between flags checked (combinations.hpp). With -h or --help
// anywhere, once every flag has been read, the help is printed instead and
// the result is nullopt. Anything else it cannot use is a kiln::Error of one
// line: an argument no option of the program has, a flag without its value,
// a value the flag cannot take (each naming the flag).
std::optional<Options> parse_options(Program program, int argc, char** argv, const ModelEntry& model);

}  // namespace kiln
