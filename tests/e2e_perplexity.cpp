// kiln_test_stories260K-perplexity against an independent computation: the
// same chunks run through the reference forward pass in tests/ one token at
// a time, with the log-likelihoods, the chunking and llama-perplexity's
// conventions (BOS at the start of each chunk, second half scored, standard
// error of the mean) written out here. Then the program's refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/reference_forward.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

namespace {

using kiln::test::run_process;

// A story in the style of the model's training data, long enough for three
// chunks of 200 tokens.
const char* kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her red "
    "ball. One day, she saw a big dog under a tree. The dog was sad because it could not find its home. Lily "
    "wanted to help the dog. She said, \"Do not be sad, dog. I will help you find your mom.\" The dog wagged "
    "its tail and they walked together. They looked near the pond and behind the slide, but the dog's mom was "
    "not there. Then Lily saw a kind old man with a hat. He said, \"I know this dog! He lives in the blue house "
    "by the shop.\" Lily and the dog ran to the blue house. A happy lady opened the door and hugged the dog. "
    "She gave Lily a big cookie to say thank you. Lily smiled and went home to tell her mom about her day.\n"
    "Tom was a small boy who liked to build things. One morning, he found a box of blocks in his room. He "
    "wanted to make a tall tower, as tall as the sky. He put one block on top of another, again and again. "
    "The tower grew and grew. His friend Sam came to play. Sam said, \"Can I help you, Tom?\" Tom said yes, "
    "and they worked together. But the tower was too tall and it fell down with a loud crash. Tom was sad, "
    "but Sam laughed and said, \"Let's build it again, and this time we will make it strong.\" They made a "
    "big base and a small top. The new tower did not fall. Tom and Sam were very proud. They learned that "
    "it is good to work together and to try again.\n"
    "In a little town, there lived a cat named Max. Max liked to sleep in the sun all day. One day, a bird "
    "came to his window and sang a song. Max opened his eyes and wanted to play with the bird. He jumped, "
    "but the bird flew away. Max was not angry. He went back to his warm spot and slept again.\n";

struct Estimates {
  std::vector<double> running;  // the [i]x values, one per chunk
  double ppl = 0, error = 0;
};

// The program's stdout: "[1]a,[2]b,...\nFinal estimate: PPL = x +/- y\n".
Estimates parse_output(const std::string& out) {
  Estimates e;
  std::istringstream in(out);
  std::string line;
  REQUIRE(std::getline(in, line));
  for (size_t at = 0; (at = line.find('[', at)) != std::string::npos; ++at)
    e.running.push_back(std::stod(line.substr(line.find(']', at) + 1)));
  REQUIRE(std::getline(in, line));
  REQUIRE(std::sscanf(line.c_str(), "Final estimate: PPL = %lf +/- %lf", &e.ppl, &e.error) == 2);
  return e;
}

// The same estimates from the reference forward pass.
Estimates reference_estimates(const std::vector<int32_t>& tokens, int n_ctx, int32_t bos) {
  const kiln::GgufFile file = kiln::GgufFile::open(kiln::test::fixture("models/stories260K/stories260K.gguf"));
  kiln::test::ReferenceModel reference(file);
  Estimates e;
  long double sum = 0, sum_squares = 0;
  long long count = 0;
  for (size_t start = 0; start + size_t(n_ctx) <= tokens.size(); start += size_t(n_ctx)) {
    reference.reset();
    for (int p = 0; p < n_ctx - 1; ++p) {
      const std::vector<float> logits = reference.step(p == 0 ? bos : tokens[start + size_t(p)]);
      if (p < n_ctx / 2) continue;  // context only
      long double total = 0;
      for (float l : logits) total += std::exp(static_cast<long double>(l));
      const long double nll = std::log(total) - logits[size_t(tokens[start + size_t(p) + 1])];
      sum += nll;
      sum_squares += nll * nll;
      ++count;
    }
    e.running.push_back(double(std::exp(sum / count)));
  }
  const long double mean = sum / count;
  e.ppl = double(std::exp(mean));
  e.error = double(std::sqrt((sum_squares / count - mean * mean) / (count - 1)) * e.ppl);
  return e;
}

bool one_line_error(const kiln::test::ProcessResult& r, const std::string& message) {
  CAPTURE(r.err);
  const std::string line = "kiln_test_stories260K-perplexity: error: ";
  return r.exit_code == 1 && r.out.empty() && r.err.rfind(line, 0) == 0 &&
         r.err.find(message) != std::string::npos && r.err.find('\n') == r.err.size() - 1;
}

}  // namespace

TEST_CASE("perplexity: stories260K's matches the reference forward pass to 1e-4" * kiln::test::needs_fixtures) {
  kiln::test::TempFolder tmp("perplexity");
  const std::string text = tmp.file("story.txt");
  kiln::test::write_bytes(text, std::vector<uint8_t>(kStory, kStory + std::string(kStory).size()));

  const kiln::GgufFile file = kiln::GgufFile::open(kiln::test::fixture("models/stories260K/stories260K.gguf"));
  const kiln::Tokenizer tokenizer = kiln::Tokenizer::from_gguf(file);
  const std::vector<int32_t> tokens = tokenizer.encode(kStory, /*add_special=*/true);
  REQUIRE(tokenizer.adds_bos());
  REQUIRE(tokens.size() >= 600);

  // 200 tokens a chunk, in forward calls of at most 64 (the binary's BATCH):
  // both halves take two calls, the second one short.
  const auto r = run_process({PERPLEXITY_BIN, "-f", text, "-c", "200", "-t", "2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Estimates kiln_says = parse_output(r.out);
  const Estimates reference = reference_estimates(tokens, 200, tokenizer.bos());
  REQUIRE(kiln_says.running.size() == tokens.size() / 200);
  REQUIRE(reference.running.size() == kiln_says.running.size());
  for (size_t c = 0; c < reference.running.size(); ++c) {
    CAPTURE(c);
    CHECK(std::fabs(kiln_says.running[c] / reference.running[c] - 1) < 1e-4);
  }
  CHECK(std::fabs(kiln_says.ppl / reference.ppl - 1) < 1e-4);
  CHECK(std::fabs(kiln_says.error / reference.error - 1) < 1e-3);  // printed to 5 decimals: about 1e-4 of it
  CHECK(r.err.find("tokens/s") != std::string::npos);

  // --chunks stops early; the estimates so far are the same.
  const auto two = run_process({PERPLEXITY_BIN, "-f", text, "-c", "200", "--chunks", "2", "-t", "1"});
  REQUIRE_MESSAGE(two.exit_code == 0, two.err);
  const Estimates first_two = parse_output(two.out);
  REQUIRE(first_two.running.size() == 2);
  CHECK(first_two.ppl == doctest::Approx(kiln_says.running[1]).epsilon(1e-6));
}

TEST_CASE("perplexity: bad input is one line and exit status 1" * kiln::test::needs_fixtures) {
  kiln::test::TempFolder tmp("perplexity-errors");
  const std::string story = tmp.file("story.txt"), short_text = tmp.file("short.txt");
  kiln::test::write_bytes(story, std::vector<uint8_t>(kStory, kStory + std::string(kStory).size()));
  kiln::test::write_bytes(short_text, {'O', 'n', 'c', 'e', '\n'});
  const std::string missing = tmp.file("no-such-text.txt");

  CHECK(one_line_error(run_process({PERPLEXITY_BIN}), "no text to score: give -f FILE"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", missing}), "-f: cannot read text file '" + missing + "'"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", tmp.path.string()}), "is a folder, not a text file"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", short_text, "-c", "200"}),
                       "is 3 tokens, fewer than one chunk of 200"));
  // The compiled context is 512 and the story about 800 tokens: one chunk by default.
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "-c", "1024"}),
                       "-c 1024: larger than the context this program was compiled for (512)"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "-c", "2"}), "-c 2: a chunk needs at least 3 tokens"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "-c", "many"}), "-c: expected an integer"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "--chunks", "0"}), "--chunks: expected -1 (all)"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "--stride", "8"}), "unknown argument '--stride'"));
  CHECK(one_line_error(run_process({PERPLEXITY_BIN, "-f", story, "-m", missing}), missing));

  // One chunk of 3 scores a single token: a perplexity, but no spread to estimate an error from.
  const auto single = run_process({PERPLEXITY_BIN, "-f", story, "-c", "3", "--chunks", "1", "-t", "1"});
  CHECK(single.exit_code == 0);
  CHECK(single.out.find("Final estimate: PPL = ") != std::string::npos);
  CHECK(single.out.find("(too few tokens for an uncertainty)") != std::string::npos);
  CHECK(single.err.find(", 1 scored") != std::string::npos);

  const auto help = run_process({PERPLEXITY_BIN, "-h"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.rfind("usage: kiln_test_stories260K-perplexity -f FILE", 0) == 0);

  const auto whole = run_process({PERPLEXITY_BIN, "-f", story, "-t", "1"});
  REQUIRE_MESSAGE(whole.exit_code == 0, whole.err);
  CHECK(parse_output(whole.out).running.size() == 1);
}
