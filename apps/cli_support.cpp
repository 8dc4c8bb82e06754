#include "apps/cli_support.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/error/error.hpp"

namespace kiln {

std::string flag_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw Error(std::string(argv[i]) + ": missing value");
  return argv[++i];
}

long long parse_int(const std::string& flag, const std::string& text, long long min, long long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') throw Error(flag + ": expected an integer, got '" + text + "'");
  if (errno == ERANGE || v < min || v > max) {
    // A bound at the type's limit is no news to the reader: "-1 or more", not "-1 to 2147483647".
    const std::string range = max >= INT_MAX && min > INT_MIN
                                  ? std::to_string(min) + " or more"
                                  : "from " + std::to_string(min) + " to " + std::to_string(max);
    throw Error(flag + ": expected an integer " + range + ", got '" + text + "'");
  }
  return v;
}

std::string read_text_file(const std::string& flag, const std::string& path, const std::string& what,
                           size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(flag + ": '" + path + "' is a folder, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(flag + ": cannot read " + what + " '" + path + "'");
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= max_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) throw Error(flag + ": error while reading '" + path + "'");
  if (text.size() > max_bytes) text.resize(max_bytes + 1);
  return text;
}

void print_text(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw Error(std::string("cannot write to standard output (") + std::strerror(errno) + ")");
}

}  // namespace kiln
