// The HTTP server every compiled model gets (<name>-server): OpenAI's
// /v1/chat/completions, /v1/completions and /v1/models, llama-server's
// /health and /props, with llama-server's flags.
#pragma once

#include "apps/cli.hpp"

namespace kiln {

// Like cli_main: `model` says what the program knows of its model.
// Serves until SIGINT or SIGTERM; returns the exit code.
int server_main(int argc, char** argv, const ModelEntry& model);

}  // namespace kiln
