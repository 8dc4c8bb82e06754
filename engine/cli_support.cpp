#include "engine/cli_support.hpp"

#include <cerrno>
#include <cstdlib>

#include "engine/error.hpp"

namespace kiln {

long long parse_int(const std::string& flag, const std::string& text, long long min, long long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max)
    throw Error(flag + ": expected an integer" +
                (min > -(1ll << 31) ? " from " + std::to_string(min) + " to " + std::to_string(max) : std::string()) +
                ", got '" + text + "'");
  return v;
}

}  // namespace kiln
