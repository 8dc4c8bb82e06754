#include "apps/logits_dump.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/files/atomic_file.hpp"
#include "engine/error.hpp"

namespace kiln {

void write_prompt_logits(Sequence& seq, const std::vector<int32_t>& prompt, const std::string& path) {
  const Model& model = seq.model();
  if (prompt.size() > size_t(model.n_ctx()))
    throw Error("--logits-out: the prompt is " + std::to_string(prompt.size()) + " tokens, the context holds " +
                std::to_string(model.n_ctx()));
  const size_t vocab = size_t(model.n_vocab());
  std::vector<float> logits(size_t(model.max_batch()) * vocab);
  std::string text;
  char number[32];
  for (size_t pos = 0; pos < prompt.size(); pos += size_t(model.max_batch())) {
    const int n = static_cast<int>(std::min(prompt.size() - pos, size_t(model.max_batch())));
    seq.forward(prompt.data() + pos, n, static_cast<int>(pos), Logits::All, logits.data());
    for (int t = 0; t < n; ++t) {
      for (size_t i = 0; i < vocab; ++i) {
        std::snprintf(number, sizeof number, i ? " %.9g" : "%.9g", double(logits[size_t(t) * vocab + i]));
        text += number;
      }
      text += '\n';
    }
  }
  write_file_atomically(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

}  // namespace kiln
