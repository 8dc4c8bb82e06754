// The command-line program every compiled model gets: flags as llama.cpp names
// them, text streamed to stdout, a timing summary on stderr.
#pragma once

#include <memory>
#include <string>

#include "engine/model/model.hpp"

namespace kiln {

// What a model's program knows of its model (codegen writes it in <name>.main.cpp).
struct ModelEntry {
  const char* name;        // the model name given to kiln_add_model
  const char* build_gguf;  // the GGUF it was compiled from, where it was at build time
  bool built_in;           // whether its weights are built into the program (EMBED)
  std::unique_ptr<Model> (*load_default)();                           // without -m
  std::unique_ptr<Model> (*load_file)(const std::string& gguf_path);  // -m FILE
};

// The model `-m` names, or the default: the built-in weights, else the GGUF
// kiln::default_model_path finds.
std::unique_ptr<Model> load_model(const ModelEntry& model, const std::string& m_flag);

// What the program loads without -m, for --help.
std::string default_model_text(const ModelEntry& model);

// Returns the process exit code.
int cli_main(int argc, char** argv, const ModelEntry& model);

}  // namespace kiln
