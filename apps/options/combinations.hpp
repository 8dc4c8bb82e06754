// The rules between a program's flags, checked once all are read.
#pragma once

#include "apps/options/options.hpp"

namespace kiln {

// Throws a one-line kiln::Error naming the flag at fault: a flag that needs
// another, flags that exclude each other, a flag the program cannot do without.
void check_combinations(Program program, const Options& o);

}  // namespace kiln
