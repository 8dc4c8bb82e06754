// The one exception type kiln throws for bad input (files, flags, prompts).
// Its message is a single line meant for the user, naming what is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace kiln
