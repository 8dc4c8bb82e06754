// llama.cpp's reference logits, as tests/llama_oracle/refdump writes them
// (the format of ../shared/models/synthetic/*.ref.txt): the prompt, the logits
// of every prompt position from one batch, and a greedy continuation with the
// top 5 logits of each step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace kiln::test
