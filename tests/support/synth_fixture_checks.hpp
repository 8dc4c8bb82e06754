// What every model kiln-synth writes for the tests is held to, shared by the
// end-to-end suites: the plain reference forward pass on random prompts, and
// kiln's promise that batching and threads change no bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/model.hpp"

namespace kiln::test {

// BOS, then n - 1 ids drawn from [3, vocab) with `seed`.
std::vector<int32_t> random_prompt(int n, int vocab, unsigned seed);

// doctest checks of `model` (compiled from `gguf`): agreement with the
// reference forward pass on two 40-token prompts.
void check_model_against_reference(const Model& model, const std::string& gguf);

// doctest checks of `model`: a 100-token prompt ingested in batches on 2 and
// 3 threads bit-identical to token by token on one; and sequences decoded in
// one batch bit-identical to their solo runs (check_batched_matches_solo).
void check_batch_and_thread_invariance(const Model& model);

// Both of the above.
void check_synthetic_model(const Model& model, const std::string& gguf);

}  // namespace kiln::test
