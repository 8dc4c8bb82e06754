// Running a program from a test and capturing what it prints.
#pragma once

#include <string>
#include <vector>

namespace kiln::test {

struct ProcessResult {
  int exit_code = -1;  // -1 if it did not exit normally (crashed)
  std::string out;
  std::string err;
  double seconds = 0;    // from start to exit
  long peak_rss_kb = 0;  // its largest resident set
};

// Runs argv[0] (a path) with `stdin_text` as its standard input.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_text = "");

}  // namespace kiln::test
