#include "apps/logits_dump.hpp"

#include <cstdio>

#include "engine/files/atomic_file.hpp"
#include "engine/error/error.hpp"

namespace kiln {

void write_prompt_logits(Session& session, const std::vector<int32_t>& prompt, const std::string& path) {
  if (prompt.size() > size_t(session.model().n_ctx()))
    throw Error("--logits-out: the prompt is " + std::to_string(prompt.size()) + " tokens, the context holds " +
                std::to_string(session.model().n_ctx()));
  std::string text;
  char number[32];
  session.ingest_every_position(prompt, [&](size_t, std::span<const float> logits) {
    for (size_t i = 0; i < logits.size(); ++i) {
      std::snprintf(number, sizeof number, i ? " %.9g" : "%.9g", double(logits[i]));
      text += number;
    }
    text += '\n';
  });
  write_file_atomically(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

}  // namespace kiln
