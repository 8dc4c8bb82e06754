// The perplexity program every compiled model gets (<name>-perplexity): the
// perplexity of the model on a text file, computed and printed the way
// llama.cpp's llama-perplexity does by default (apps/perplexity_score.hpp),
// with the speed of the forward passes.
#pragma once

#include "apps/cli.hpp"

namespace kiln {

// `name` is the model's name (the program is <name>-perplexity).
int perplexity_main(int argc, char** argv, const ModelEntry& model);

}  // namespace kiln
