// Batched decoding against solo runs, shared by the end-to-end suites: the
// promise of kiln::SequenceBatch that a sequence's logits are the same bits
// whether it ran alone or batched with other sequences.
#pragma once

#include "engine/model/model.hpp"

namespace kiln::test {

// Runs a few sequences of `model` with prompts of different lengths, joining
// at different steps (so one batch holds tokens at different positions, a
// new prompt next to other sequences' next tokens, a prompt in two parts
// with Logits::None then Last, and one with Logits::All), through one
// SequenceBatch on `threads` threads (ThreadFit::Exact), greedily, each step
// one forward pass; then each sequence alone on one thread. doctest-checks
// that every logit row is bit-identical (memcmp). Needs max_batch >= 16 and
// n_ctx >= 32.
void check_batched_matches_solo(const Model& model, int threads);

}  // namespace kiln::test
