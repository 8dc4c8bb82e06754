// Several sessions of one model stepped together: one batched forward pass
// (SequenceBatch) appends tokens to each session's context, as the server
// decodes its requests. Each session's logits are the bits its own ingest()
// gives for the same tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/model/model.hpp"
#include "engine/session/session.hpp"

namespace kiln {

class SessionBatch {
 public:
  // Allocates the batch's activations (Model::new_batch), on one thread.
  explicit SessionBatch(const Model& model);

  // Tokens to append to one session's context, and which of their logits to compute.
  struct Part {
    Session* session = nullptr;
    std::span<const int32_t> tokens;
    Logits which = Logits::Last;
  };

  // Appends every part's tokens to its session's context in one forward
  // pass. `logits` receives the rows the parts ask for, part after part, as
  // SequenceBatch::forward. Throws kiln::Error, with no context changed, if a
  // part does not fit in its session's context or the parts break
  // SequenceBatch::forward's rules. Allocates nothing for up to max_batch() parts.
  void ingest(std::span<const Part> parts, float* logits);

  // The batch's threads (SequenceBatch::set_threads).
  SequenceBatch& batch() { return *batch_; }
  const SequenceBatch& batch() const { return *batch_; }

 private:
  const Model& model_;
  std::unique_ptr<SequenceBatch> batch_;
  std::vector<SequenceTokens> sequence_parts_;
};

}  // namespace kiln
