#include "tests/support/batch_check.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

namespace {

using Tokens = std::vector<int32_t>;

struct Chunk {
  Tokens tokens;
  Logits which;
};

// A sequence's prompt, ingested a chunk per step from step `joins`, then
// greedy decoding until the last step.
struct Stream {
  std::vector<Chunk> prompt;
  int joins;
};

constexpr int kSteps = 12;

Tokens ids(int n, int first, int vocab) {
  Tokens t;
  for (int i = 0; i < n; ++i) t.push_back((first + 7 * i) % (vocab - 3) + 3);
  return t;
}

std::vector<Stream> streams(int vocab) {
  return {
      {{{ids(5, 11, vocab), Logits::Last}}, 0},
      {{{ids(1, 40, vocab), Logits::Last}}, 0},                                   // a one-token prompt
      {{{ids(9, 5, vocab), Logits::All}}, 2},                                     // joins mid-way, every row
      {{{ids(6, 23, vocab), Logits::None}, {ids(4, 8, vocab), Logits::Last}}, 3},  // a prompt in two parts
      {{{ids(2, 90, vocab), Logits::Last}}, 7},
  };
}

// How many logit rows a part of n tokens gives.
int rows_of(Logits which, int n) { return which == Logits::All ? n : which == Logits::Last ? 1 : 0; }

int32_t argmax(const float* row, int n) { return static_cast<int32_t>(std::max_element(row, row + n) - row); }

// What one sequence is at: its sequence, position, the logit rows it got.
struct Progress {
  std::unique_ptr<Sequence> seq;
  int pos = 0;
  std::vector<float> rows;
  int32_t next = -1;  // the token to ingest next, once decoding
};

// The part of step `step` for stream `s` (false: none).
bool part_at(const Stream& s, Progress& p, int step, int vocab, SequenceTokens& part) {
  if (step < s.joins) return false;
  const size_t chunk = static_cast<size_t>(step - s.joins);
  part.sequence = p.seq.get();
  part.pos = p.pos;
  if (chunk < s.prompt.size()) {
    part.tokens = s.prompt[chunk].tokens.data();
    part.n = static_cast<int>(s.prompt[chunk].tokens.size());
    part.which = s.prompt[chunk].which;
  } else {
    p.next = argmax(p.rows.data() + p.rows.size() - size_t(vocab), vocab);
    part.tokens = &p.next;
    part.n = 1;
    part.which = Logits::Last;
  }
  return true;
}

// Appends a part's rows (at `logits`) to what the stream got; returns how many floats they are.
size_t take_rows(const SequenceTokens& part, Progress& p, const float* logits, int vocab) {
  const size_t n = size_t(rows_of(part.which, part.n)) * size_t(vocab);
  p.rows.insert(p.rows.end(), logits, logits + n);
  p.pos += part.n;
  return n;
}

}  // namespace

void check_batched_matches_solo(const Model& model, int threads) {
  const int vocab = model.n_vocab();
  const std::vector<Stream> all = streams(vocab);
  std::vector<float> logits(size_t(model.max_batch()) * size_t(vocab));

  // Each alone, a forward call per step, on one thread.
  std::vector<Progress> solo(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    solo[i].seq = model.new_sequence();
    for (int step = 0; step < kSteps; ++step) {
      SequenceTokens part;
      if (!part_at(all[i], solo[i], step, vocab, part)) continue;
      solo[i].seq->forward(part.tokens, part.n, part.pos, part.which, logits.data());
      take_rows(part, solo[i], logits.data(), vocab);
    }
  }

  // All together, one batched forward pass per step.
  std::unique_ptr<SequenceBatch> batch = model.new_batch();
  batch->set_threads(threads, ThreadFit::Exact);
  std::vector<Progress> batched(all.size());
  for (Progress& p : batched) p.seq = model.new_sequence();
  for (int step = 0; step < kSteps; ++step) {
    std::vector<SequenceTokens> parts;
    std::vector<size_t> owner;
    for (size_t i = 0; i < all.size(); ++i) {
      SequenceTokens part;
      if (!part_at(all[i], batched[i], step, vocab, part)) continue;
      parts.push_back(part);
      owner.push_back(i);
    }
    batch->forward(parts, logits.data());
    const float* at = logits.data();
    for (size_t k = 0; k < parts.size(); ++k) at += take_rows(parts[k], batched[owner[k]], at, vocab);
  }

  for (size_t i = 0; i < all.size(); ++i) {
    CAPTURE(i);
    REQUIRE(batched[i].rows.size() == solo[i].rows.size());
    CHECK(batched[i].pos == solo[i].pos);
    CHECK(std::memcmp(batched[i].rows.data(), solo[i].rows.data(), solo[i].rows.size() * sizeof(float)) == 0);
  }
}

}  // namespace kiln::test
