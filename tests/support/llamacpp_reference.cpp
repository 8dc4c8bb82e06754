#include "tests/support/llamacpp_reference.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/support/reference_check.hpp"

namespace kiln::test {

namespace {

std::vector<int32_t> ints(std::istringstream& in) {
  std::vector<int32_t> v;
  for (int32_t x; in >> x;) v.push_back(x);
  return v;
}

int argmax(const float* v, int n) { return static_cast<int>(std::max_element(v, v + n) - v); }

}  // namespace

LlamaCppReference read_llamacpp_reference(const std::string& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file, "cannot read " << path);
  LlamaCppReference r;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "PROMPT") {
      in >> tag >> tag;  // "n=16" "ids:"
      r.prompt = ints(in);
    } else if (tag == "LOGITS") {
      int pos = 0;
      in >> pos;
      std::vector<float> row;
      for (float x; in >> x;) row.push_back(x);
      r.logits.push_back(row);
    } else if (tag == "GEN") {
      r.gen_margins.push_back(std::stof(line.substr(line.find("margin=") + 7)));
      std::istringstream top5(line.substr(line.find("top5:") + 5));
      r.gen_top5.emplace_back();
      for (std::string item; top5 >> item;)
        r.gen_top5.back().emplace_back(std::stoi(item.substr(0, item.find(':'))), std::stof(item.substr(item.find(':') + 1)));
    } else if (tag == "GEN_IDS") {
      r.gen_ids = ints(in);
    }
  }
  INFO(path);
  REQUIRE(!r.prompt.empty());
  REQUIRE(r.logits.size() == r.prompt.size());
  for (const auto& row : r.logits) REQUIRE(row.size() == r.logits[0].size());
  REQUIRE(r.gen_margins.size() == r.gen_ids.size());
  REQUIRE(r.gen_top5.size() == r.gen_ids.size());
  for (const auto& top5 : r.gen_top5) REQUIRE(top5.size() == 5);
  return r;
}

std::pair<double, double> prompt_difference(Sequence& seq, const LlamaCppReference& ref) {
  const int vocab = seq.model().n_vocab();
  REQUIRE(size_t(vocab) == ref.logits[0].size());
  const std::vector<float> got = all_logits(seq, ref.prompt, seq.model().max_batch());
  double max_abs = 0, sum_sq = 0;
  for (size_t p = 0; p < ref.prompt.size(); ++p)
    for (int i = 0; i < vocab; ++i) {
      const double d = got[p * vocab + i] - ref.logits[p][i];
      max_abs = std::max(max_abs, std::fabs(d));
      sum_sq += d * d;
    }
  return {max_abs, std::sqrt(sum_sq / double(ref.prompt.size() * vocab))};
}

void check_against_llamacpp(Sequence& seq, const LlamaCppReference& ref, const LlamaCppBounds& b) {
  const int vocab = seq.model().n_vocab();
  // Not a structured binding: INFO's lambda cannot capture one in Clang 14.
  const std::pair<double, double> difference = prompt_difference(seq, ref);
  const double max_abs = difference.first, rms = difference.second;
  INFO("prompt: max |d| " << max_abs << ", rms " << rms);
  CHECK(max_abs <= b.max_abs);
  CHECK(rms <= b.rms);

  // Teacher-forced: the prompt, then the reference's ids but the last.
  std::vector<int32_t> forced_ids = ref.prompt;
  forced_ids.insert(forced_ids.end(), ref.gen_ids.begin(), ref.gen_ids.end() - 1);
  const std::vector<float> forced = all_logits(seq, forced_ids, seq.model().max_batch());
  double max_abs_gen = 0;
  for (size_t s = 0; s < ref.gen_ids.size(); ++s) {
    const float* row = &forced[(ref.prompt.size() - 1 + s) * vocab];
    if (ref.gen_margins[s] >= b.margin) CHECK(argmax(row, vocab) == ref.gen_ids[s]);
    for (const auto& [id, logit] : ref.gen_top5[s]) max_abs_gen = std::max(max_abs_gen, double(std::fabs(row[id] - logit)));
  }
  MESSAGE("vs llama.cpp: prompt max |d| " << max_abs << ", rms " << rms << "; generation steps' top-5 max |d| "
                                         << max_abs_gen);
  CHECK(max_abs_gen <= b.max_abs);

  // Free-running: equal ids, or the first difference at a close call.
  std::vector<int32_t> ids = ref.prompt;
  const std::vector<float> logits = all_logits(seq, ids, seq.model().max_batch());
  std::vector<float> last(logits.end() - vocab, logits.end());
  for (size_t s = 0; s < ref.gen_ids.size(); ++s) {
    const int32_t next = argmax(last.data(), vocab);
    if (next != ref.gen_ids[s]) {
      CHECK(ref.gen_margins[s] < b.margin);
      break;
    }
    ids.push_back(next);
    seq.forward(&next, 1, static_cast<int>(ids.size()) - 1, Logits::Last, last.data());
  }
}

}  // namespace kiln::test
