// llama.cpp's reference logits, as tests/llama_oracle/refdump writes them
// (the format of ../shared/models/synthetic/*.ref.txt): the prompt, the logits
// of every prompt position from one batch, and a greedy continuation with the
// top 5 logits of each step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/model.hpp"

namespace kiln::test {

struct LlamaCppReference {
  std::vector<int32_t> prompt;
  std::vector<std::vector<float>> logits;  // [position][vocab]
  std::vector<int32_t> gen_ids;
  std::vector<float> gen_margins;                            // top-1 minus top-2 at each greedy step
  std::vector<std::vector<std::pair<int, float>>> gen_top5;  // [step]: id, logit
};

// Reads a reference file; fails the current test when it is missing or its
// parts disagree in size (a position without its logits, a step without its top 5).
LlamaCppReference read_llamacpp_reference(const std::string& path);

// How far a compiled model may be from a reference: the largest and the RMS
// |logit difference| over the prompt (and over the generation steps' top 5),
// and the top-1 margin from which the greedy choice must be llama.cpp's.
struct LlamaCppBounds {
  float max_abs, rms, margin;
};

// The largest |logit difference| between `seq` run over the reference's
// prompt in one batch and the reference, and the RMS of the differences.
std::pair<double, double> prompt_difference(Sequence& seq, const LlamaCppReference& ref);

// doctest checks of `seq` against `ref` within `b`: the prompt's logits; the
// greedy steps teacher-forced (the top-5 logits llama.cpp recorded, and the
// argmax wherever its margin is clear); and greedy free-running, whose ids
// must be equal up to a step whose margin is not clear.
void check_against_llamacpp(Sequence& seq, const LlamaCppReference& ref, const LlamaCppBounds& b);

}  // namespace kiln::test
