// The run-time face of a compiled model. Each model kiln compiles implements
// this once (models/<arch>/compiled_model.hpp); the session, the command-line
// program and embedding code talk to a model only through it.
#pragma once

#include <cstdint>

#include "engine/model_desc.hpp"
#include "engine/tokenizer.hpp"

namespace kiln {

// Which logits a forward call produces.
enum class Logits { None, Last, All };

class Model {
 public:
  virtual ~Model() = default;

  // What the binary was compiled for.
  virtual const ModelDesc& desc() const = 0;
  virtual const std::string& gguf_path() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  virtual int n_ctx() const = 0;      // positions the KV cache holds (fixed at build time)
  virtual int max_batch() const = 0;  // tokens one forward call takes at most (fixed at build time)
  virtual int n_vocab() const = 0;

  virtual void set_threads(int n) = 0;
  virtual int threads() const = 0;

  // Runs tokens[0..n) at positions [pos, pos + n), writing their keys and
  // values into the cache; positions before pos must already be there.
  // Requires 1 <= n <= max_batch() and pos + n <= n_ctx(). `logits` receives
  // n_vocab floats (Logits::Last) or n * n_vocab floats (Logits::All).
  virtual void forward(const int32_t* tokens, int n, int pos, Logits which, float* logits) = 0;
};

}  // namespace kiln
