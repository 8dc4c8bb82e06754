// Turning a model description into C++ source: the generated files that
// kiln_add_model compiles into a model library and its command-line binary.
#pragma once

#include <string>

#include "engine/model/model_desc.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln::codegen {

struct BuildOptions {
  std::string name;       // model name as given to kiln_add_model (also the file names)
  std::string gguf_path;  // absolute path of the GGUF it was generated from (the binary's default -m)
  int n_ctx = 0;          // positions of the KV cache
  int max_batch = 0;      // tokens per forward call
  TensorType kv_type = TensorType::F16;  // KV cache element type: F16 or F32
  bool swa_full = false;  // sliding-window layers keep every position, not a ring of their window
  // The weight image to build into the program (<name>.weights, written by
  // <name>-pack); empty: the program reads a GGUF at run time.
  std::string embed_image{};
};

struct GeneratedSources {
  std::string header;   // <name>.hpp: the public API (load)
  std::string forward;  // <name>.forward.hpp: configuration and straight-line forward pass (a template)
  std::string model;    // <name>.gen.cpp: the model description and load(); runs the forward pass
  std::string timed;    // <name>.timed.cpp: the model's time_kernels (the forward pass with its kernels timed)
  std::string main;     // <name>.main.cpp: the command-line program
  std::string bench;    // <name>.bench.cpp: the benchmark program
  std::string capi;     // <name>.capi.cpp: binds the C API (capi/kiln.h) of lib<name>.so to load()
  std::string perplexity;  // <name>.perplexity.cpp: the perplexity program
  std::string server;   // <name>.server.cpp: the OpenAI-compatible HTTP server
  std::string pack;     // <name>.pack.cpp: the build-time packer of the weight image (with embed_image)
  std::string weights;  // <name>.weights.cpp: the weight image in the read-only data (with embed_image)
};

GeneratedSources emit_model(const ModelDesc& desc, const BuildOptions& opt);

// A C++ identifier made from a model name ("tinyllama-1.1b" -> "tinyllama_1_1b").
std::string identifier(const std::string& name);

}  // namespace kiln::codegen
