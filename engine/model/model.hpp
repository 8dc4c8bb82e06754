// The run-time face of a compiled model. Each model kiln compiles implements
// this once (models/<arch>/compiled_model.hpp); the session, the command-line
// program and embedding code talk to a model only through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/model/model_desc.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace kiln {

// Which logits a forward call produces.
enum class Logits { None, Last, All };

// How the KV cache stores one position: a key and a value vector of kv_dim
// elements per layer. Saved states record it so that a cache written by one
// binary is only read back into a cache of the same layout.
struct KvLayout {
  int n_layer = 0;
  int kv_dim = 0;               // elements of one key (or value) vector
  std::string type;             // element type, e.g. "f32"
  int bytes_per_value = 0;

  size_t bytes_per_position() const { return 2 * size_t(n_layer) * size_t(kv_dim) * size_t(bytes_per_value); }
  bool operator==(const KvLayout&) const = default;
};

// How a forward pass uses the threads it is given (Sequence::set_threads).
//   ByWork: as many as its arithmetic pays for, at most threads(): a team
//     costs a barrier after every kernel, so a pass too small to gain from
//     one (a tiny model's token) runs on one thread, which a busy second
//     core cannot slow down either. The default.
//   Exact: always threads() (tests of thread invariance; measurements).
// Results are the same bits either way.
enum class ThreadFit { ByWork, Exact };

class Sequence;
class SequenceBatch;

// Whether a cache whose sliding-window layers hold positions from held_from
// on (every other layer holding them all) can go on at `pos`: each query of a
// sliding layer reads the window - 1 positions before it.
inline bool kv_continues_at(int window, int held_from, int pos) {
  return held_from == 0 || pos == 0 || pos - (window - 1) >= held_from;
}

// What a loaded model shares between all its sequences: the weights (mapped
// and read-only after loading), the tokenizer and the description. Every
// const member may be called from any thread at any time. The KV cache, the
// activations and the thread count belong to a Sequence (new_sequence), so
// one loaded model serves many independent conversations.
class Model {
 public:
  virtual ~Model() = default;

  // What the binary was compiled for.
  virtual const ModelDesc& desc() const = 0;
  // Names these weights (model_fingerprint): what saved states are checked against.
  virtual uint64_t fingerprint() const = 0;
  virtual const std::string& gguf_path() const = 0;  // for built-in weights, "<name> (built in)"
  // The GGUF's metadata and tensor directory (chat template, tokenizer keys);
  // for built-in weights, a GgufFile without tensor data.
  virtual const GgufFile& gguf() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  virtual int n_ctx() const = 0;      // positions a KV cache holds (fixed at build time)
  virtual int max_batch() const = 0;  // tokens one forward call takes at most (fixed at build time)
  virtual int n_vocab() const = 0;
  // How a sequence's KV cache stores a position (Sequence::read_kv).
  virtual KvLayout kv_layout() const = 0;
  // Positions a query of a sliding-window layer attends to (itself and those
  // before it), 0 without such layers. A sliding-window layer's cache keeps
  // only a ring of recent positions (Sequence::kv_held_from).
  virtual int sliding_window() const = 0;
  // Rows of that ring; 0 where every layer keeps every position (no sliding
  // layers, a ring no smaller than the context, or a SWA_FULL build).
  virtual int kv_ring_rows() const = 0;

  // A new sequence on these weights: its KV cache and activation scratch are
  // allocated here, once (the cache's pages are touched only when used), so a
  // forward pass allocates nothing. It runs on one thread until told
  // otherwise. The model must outlive it.
  virtual std::unique_ptr<Sequence> new_sequence() const = 0;
  // Activation scratch and a thread count for forward passes over several of
  // its sequences at once (SequenceBatch), allocated here, once.
  virtual std::unique_ptr<SequenceBatch> new_batch() const = 0;
};

// One sequence's state on a shared Model: its KV cache, the activations of a
// forward pass, and the threads it runs on. Sequences of one model are
// independent: two may run forward passes at the same time on two threads
// (each opens its own OpenMP team; docs/ARCHITECTURE.md, "Sessions"). One
// sequence is used by one thread at a time.
class Sequence {
 public:
  virtual ~Sequence() = default;

  virtual const Model& model() const = 0;

  virtual void set_threads(int n, ThreadFit fit = ThreadFit::ByWork) = 0;
  virtual int threads() const = 0;
  // The threads a forward pass of n tokens runs on.
  virtual int threads_for(int n_tokens) const = 0;

  // Runs tokens[0..n) at positions [pos, pos + n), writing their keys and
  // values into the cache; positions before pos must already be there.
  // Requires 1 <= n <= max_batch() and pos + n <= n_ctx(). `logits` receives
  // n_vocab floats (Logits::Last) or n * n_vocab floats (Logits::All).
  virtual void forward(const int32_t* tokens, int n, int pos, Logits which, float* logits) = 0;

  // The first position that the sliding-window layers' caches still hold
  // (they keep a ring of the latest positions written); 0 in a model without
  // them. Every other layer holds every position written. A forward pass at
  // pos needs the window before it: kv_continues_at.
  virtual int kv_held_from() const = 0;

  // Copies positions [first_pos, first_pos + n_pos) of the KV cache out of or
  // into the sequence, n_pos * Model::kv_layout().bytes_per_position() bytes,
  // position by position (within a position: layer by layer, the key then the
  // value), so the first k positions of a copy are a prefix of its bytes.
  // A sliding-window layer's rows of positions it no longer holds read as
  // zeros; write_kv is told from which position `in` holds those layers'
  // rows (held_from: what kv_held_from() was for the copy). Writing ends the
  // cache at first_pos + n_pos. Throws kiln::Error if the range is not inside
  // [0, n_ctx()).
  virtual void read_kv(int first_pos, int n_pos, uint8_t* out) const = 0;
  virtual void write_kv(int first_pos, int n_pos, const uint8_t* in, int held_from) = 0;
};

// One sequence's part of a batched forward pass: tokens[0..n) at positions
// [pos, pos + n) of `sequence`, with the logits `which` asks for.
struct SequenceTokens {
  Sequence* sequence = nullptr;
  const int32_t* tokens = nullptr;
  int n = 0;
  int pos = 0;
  Logits which = Logits::Last;
};

// Forward passes over several sequences of one model at once, as a server
// steps its requests: each weight matrix is read once for the next tokens of
// all of them. Each token is computed exactly as in its own sequence's
// forward() (the same rows of the same kernels; attention reads only its own
// sequence's cache), so a sequence's logits are the same bits whether it ran
// alone or batched with others. Owns its activations and thread count; the
// sequences keep their KV caches. Used by one thread at a time.
class SequenceBatch {
 public:
  virtual ~SequenceBatch() = default;

  virtual void set_threads(int n, ThreadFit fit = ThreadFit::ByWork) = 0;
  virtual int threads() const = 0;

  // One forward pass over every part, as forward() would run each on its own
  // sequence. Requires sequences of this batch's model, each at most once,
  // 1 <= total tokens <= Model::max_batch() and each part inside the
  // context. `logits` receives, part after part, the rows each asks for
  // (Last: one, All: n, None: none), n_vocab floats each. Throws kiln::Error
  // naming the problem, with no cache changed, if the parts break these rules.
  virtual void forward(std::span<const SequenceTokens> parts, float* logits) = 0;
};

}  // namespace kiln
