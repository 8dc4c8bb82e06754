// Parsing the command line of a compiled model's program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/session/sampler.hpp"

namespace kiln {

struct CliOptions {
  std::string model_path;  // -m; empty: the GGUF the binary was compiled from
  std::string prompt;      // -p
  // -f; read by the program once the model is loaded (only as much as its
  // context could hold). The later of -p and -f counts.
  std::string prompt_file;
  std::vector<int32_t> prompt_ids;  // --prompt-ids: token ids fed as they are (no BOS added)
  std::string logits_out;  // --logits-out: write every prompt position's logits here
  int n_predict = -1;      // -n; -1: until end of generation or a full context
  int threads = 0;         // -t; 0: all hardware threads
  std::string prompt_cache;  // --prompt-cache; empty: none
  bool prompt_cache_ro = false;
  bool display_prompt = true;
  bool interactive = false;  // -i: after the prompt, each line read from stdin continues the text
  bool conversation = false;  // -cnv: chat with the model's template, a user turn per line of stdin
  std::string system_prompt;  // -sys: the conversation's system message
  std::string chat_template_file;  // --chat-template-file: instead of the GGUF's template
  bool help = false;
  SamplerParams sampling;
};

// Throws kiln::Error with a one-line message for an unknown flag or a missing
// or malformed value.
CliOptions parse_cli(int argc, char** argv);

std::string cli_usage(const std::string& program, const std::string& default_model);

}  // namespace kiln
