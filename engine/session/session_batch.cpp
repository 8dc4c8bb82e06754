#include "engine/session/session_batch.hpp"

#include <string>

#include "engine/error/error.hpp"

namespace kiln {

SessionBatch::SessionBatch(const Model& model) : model_(model), batch_(model.new_batch()) {
  sequence_parts_.reserve(static_cast<size_t>(model.max_batch()));  // every part holds a token
}

void SessionBatch::ingest(std::span<const Part> parts, float* logits) {
  sequence_parts_.clear();
  for (const Part& p : parts) {
    if (!p.session) throw Error("batched ingest: a part has no session");
    if (p.session->n_past() + p.tokens.size() > static_cast<size_t>(model_.n_ctx()))
      throw Error(std::to_string(p.session->n_past() + p.tokens.size()) + " tokens do not fit in the context of " +
                  std::to_string(model_.n_ctx()) + " (set at build time: kiln_add_model CTX)");
    sequence_parts_.push_back({&p.session->sequence(), p.tokens.data(), static_cast<int>(p.tokens.size()),
                               p.session->n_past(), p.which});
  }
  batch_->forward(sequence_parts_, logits);
  for (const Part& p : parts) p.session->tokens_.insert(p.session->tokens_.end(), p.tokens.begin(), p.tokens.end());
}

}  // namespace kiln
