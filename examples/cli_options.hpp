// Parsing the command line of a compiled model's program.
#pragma once

#include <string>

#include "engine/sampler.hpp"

namespace kiln {

struct CliOptions {
  std::string model_path;  // -m; empty: the GGUF the binary was compiled from
  std::string prompt;      // -p, or the contents of -f
  int n_predict = -1;      // -n; -1: until end of generation or a full context
  int threads = 0;         // -t; 0: all hardware threads
  bool display_prompt = true;
  bool help = false;
  SamplerParams sampling;
};

// Throws kiln::Error with a one-line message for an unknown flag, a missing
// or malformed value, or an unreadable -f file.
CliOptions parse_cli(int argc, char** argv);

std::string cli_usage(const std::string& program, const std::string& default_gguf);

}  // namespace kiln
