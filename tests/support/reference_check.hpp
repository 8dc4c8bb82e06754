// Checking a compiled model against the plain reference forward pass
// (tests/support/reference_forward.hpp), shared by the end-to-end suites.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/model/model.hpp"

namespace kiln::test {

// Logits of every position of `ids` from position 0, `chunk` tokens per forward call.
std::vector<float> all_logits(Sequence& seq, const std::vector<int32_t>& ids, int chunk);

struct ReferenceAgreement {
  float worst = 0;       // largest |logit difference| over all positions
  size_t close = 0;      // positions whose logits all agree within 2e-3
  size_t positions = 0;
};

// Runs `ids` through `seq` in one batch and through the reference (which
// rounds K/V to F16 when the model's cache is F16).
ReferenceAgreement compare_with_reference(Sequence& seq, const GgufFile& file, const std::vector<int32_t>& ids);

// compare_with_reference, then doctest checks, by where the model rounds
// activations to 8 bits (before quantized matrices): nowhere, every logit
// within 2e-3; only at the output, 90 % of the positions within 2e-3 and all
// within 0.05; inside the layers (the rounding reaches the KV cache), all
// within 0.75, and half the positions within 2e-3 where the layers' rounded
// types are Q8_0 and Q4_0 only (see the comments inside).
void check_against_reference(Sequence& seq, const GgufFile& file, const std::vector<int32_t>& ids);

}  // namespace kiln::test
