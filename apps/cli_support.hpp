// What every kiln program shares at its edges: reading numbers and files
// named by flags, writing to stdout, and turning an exception into the
// one-line error and exit status 1.
#pragma once

#include <cstdio>
#include <exception>
#include <string>

namespace kiln {

// The integer in `text`, which must lie in [min, max]; otherwise a kiln::Error
// "<flag>: expected an integer ..., got '<text>'".
long long parse_int(const std::string& flag, const std::string& text, long long min, long long max);

// The value after the flag argv[i], moving i onto it; a kiln::Error
// "<flag>: missing value" when the flag is the last argument.
std::string flag_value(int argc, char** argv, int& i);

// The whole of the file a flag names (-f), or only its first max_bytes + 1
// bytes if it is longer (which says so, without reading the rest); a folder
// or an unreadable file is a kiln::Error naming the flag, the path and `what`
// the file was to be ("prompt file").
std::string read_text_file(const std::string& flag, const std::string& path, const std::string& what,
                           size_t max_bytes = std::string::npos);

// Writes and flushes `text`. The first failed write (a closed pipe with
// SIGPIPE ignored, a full disk) is a kiln::Error: nobody reads what would follow.
void print_text(const std::string& text);

// Runs a program's body; an exception becomes "<program>: error: <what>" on
// stderr (after flushing what stdout already has) and exit status 1.
template <class Body>
int run_reporting_errors(const std::string& program, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return 1;
  }
}

}  // namespace kiln
