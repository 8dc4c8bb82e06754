// Generates a few tokens with a model compiled by kiln_add_model, through the
// public interface only (the generated header and engine/session/session.hpp), and
// checks that greedy generation repeats itself exactly. Exit 0 on success.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "engine/session/session.hpp"
#include "tiny.hpp"

namespace {

std::vector<int32_t> greedy(kiln::Session& session, const std::vector<int32_t>& prompt, int n_predict) {
  kiln::SamplerParams params;
  params.temperature = 0;
  kiln::Sampler sampler(params, session.model().n_vocab());
  std::vector<int32_t> out;
  kiln::generate(session, prompt, n_predict, sampler, [&](int32_t token) {
    out.push_back(token);
    return true;
  });
  return out;
}

}  // namespace

int main() {
  try {
    auto model = kiln::models::tiny::load();
    kiln::Session session(*model);
    const std::vector<int32_t> prompt = model->tokenizer().encode("Once upon a time", true);

    const auto logits = session.ingest(prompt);
    for (float v : logits) {
      if (!std::isfinite(v)) {
        std::fprintf(stderr, "consumer: a logit of the prompt is not finite\n");
        return 1;
      }
    }
    session.reset();
    const auto first = greedy(session, prompt, 16);
    session.reset();
    const auto second = greedy(session, prompt, 16);
    if (first.empty() || first != second) {
      std::fprintf(stderr, "consumer: greedy generation gave %zu then %zu different tokens\n", first.size(),
                   second.size());
      return 1;
    }
    std::printf("consumer: %zu prompt tokens, %zu generated, the same twice\n", prompt.size(), first.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
