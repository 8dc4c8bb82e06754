// The HTTP server every compiled model gets (<name>-server): OpenAI's
// /v1/chat/completions, /v1/completions and /v1/models, llama-server's
// /health and /props, with llama-server's flags.
#pragma once

#include "examples/cli.hpp"

namespace kiln {

// Like cli_main: `name` is the model's name, `default_gguf` the file it was
// compiled from. Serves until SIGINT or SIGTERM; returns the exit code.
int server_main(int argc, char** argv, const char* name, const char* default_gguf, LoadModelFn load);

}  // namespace kiln
