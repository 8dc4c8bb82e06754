// End to end on a real trained model: stories260K compiled with
// kiln_add_model, checked against llama2.c's outputs (../shared) and against
// the plain reference forward pass in tests/.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/synth.hpp"
#include "engine/session/session.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/reference_forward.hpp"
#include "tests/support/run_process.hpp"

namespace {

const std::string kDir = KILN_SHARED_DIR "/models/stories260K/";

kiln::Model& model() {
  static std::unique_ptr<kiln::Model> m = kiln::models::kiln_test_stories260K::load();
  return *m;
}

// A sequence of the model for the tests that call forward themselves.
kiln::Sequence& sequence() {
  static std::unique_ptr<kiln::Sequence> s = model().new_sequence();
  return *s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<int32_t> parse_ids(const std::string& text) {
  std::istringstream in(text);
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

struct ReferenceRun {
  std::string prompt;
  std::string stdout_text;     // llama2.c's exact stdout
  std::vector<int32_t> ids;    // t0..t200 (section 2 of reference-logits.txt)
  std::vector<int32_t> prompt_ids;
};

// Both reference files, joined by prompt.
std::vector<ReferenceRun> reference_runs() {
  std::vector<ReferenceRun> runs;
  const std::string text = read_file(kDir + "reference-llama2c.txt");
  for (size_t at = 0; (at = text.find("$ ./run ", at)) != std::string::npos;) {
    const size_t line_end = text.find('\n', at);
    const std::string cmd = text.substr(at, line_end - at);
    const size_t q0 = cmd.find("-i \"") + 4, q1 = cmd.rfind('"');
    const std::string begin = "----- BEGIN STDOUT -----\n";
    const size_t b = text.find(begin, at) + begin.size(), e = text.find("----- END STDOUT -----", b);
    runs.push_back({cmd.substr(q0, q1 - q0), text.substr(b, e - b), {}, {}});
    at = e;
  }
  std::istringstream logits(read_file(kDir + "reference-logits.txt"));
  size_t next = 0;
  for (std::string line; std::getline(logits, line);) {
    if (line.rfind("prompt '", 0) == 0 && next < runs.size()) {
      const size_t b = line.find("prompt_ids=[") + 12;
      runs[next].prompt_ids = parse_ids(line.substr(b, line.find(']', b) - b));
    } else if (line.rfind("ids: ", 0) == 0 && next < runs.size()) {
      runs[next++].ids = parse_ids(line.substr(5));
    }
  }
  // The folder's README: four prompts, each with its text, its prompt ids and 201 greedy ids.
  REQUIRE(runs.size() == 4);
  REQUIRE(next == 4);
  for (const auto& run : runs) {
    REQUIRE(!run.stdout_text.empty());
    REQUIRE(!run.prompt_ids.empty());
    REQUIRE(run.ids.size() == 201);
  }
  return runs;
}

std::vector<float> all_logits(const std::vector<int32_t>& ids, int chunk) {
  return kiln::test::all_logits(sequence(), ids, chunk);
}

int argmax(const float* v, int n) { return static_cast<int>(std::max_element(v, v + n) - v); }

}  // namespace

TEST_CASE("stories260K: the tokenizer reproduces llama2.c's prompt ids") {
  for (const auto& run : reference_runs())
    CHECK(model().tokenizer().encode(run.prompt, true) == run.prompt_ids);
}

TEST_CASE("stories260K: logits of 'Once upon a time' match llama2.c to 1e-4") {
  const std::vector<int32_t> ids = {1, 403, 407, 261, 378};
  const std::vector<float> logits = all_logits(ids, 64);
  std::istringstream in(read_file(kDir + "reference-logits.txt"));
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    int pos = 0;
    if (std::sscanf(line.c_str(), "LOGITS pos=%d", &pos) == 1) {
      const float* row = &logits[size_t(pos) * 512];
      std::istringstream f(line.substr(line.find("first8:") + 7));
      for (int id = 0; id < 8; ++id) {
        float want = 0;
        f >> want;
        CHECK(std::fabs(row[id] - want) <= 1e-4f);
      }
      CHECK(argmax(row, 512) == std::stoi(line.substr(line.find("argmax=") + 7)));
      ++checked;
    } else if (std::sscanf(line.c_str(), "TOP5 pos=%d", &pos) == 1) {
      std::istringstream f(line.substr(line.find(':') + 1));
      for (std::string item; f >> item;) {
        const int id = std::stoi(item.substr(0, item.find(':')));
        CHECK(std::fabs(logits[size_t(pos) * 512 + size_t(id)] - std::stof(item.substr(item.find(':') + 1))) <= 1e-4f);
      }
    }
  }
  CHECK(checked == 5);
}

TEST_CASE("stories260K: greedy generation reproduces llama2.c's token ids") {
  kiln::SamplerParams greedy;
  greedy.temperature = 0;
  for (const auto& run : reference_runs()) {
    CAPTURE(run.prompt);
    kiln::Session session(model());
    kiln::Sampler sampler(greedy, model().n_vocab());
    std::vector<int32_t> ids = run.prompt_ids;
    kiln::generate(session, run.prompt_ids, int(run.ids.size() - run.prompt_ids.size()), sampler,
                   [&](int32_t t) {
      ids.push_back(t);
      return true;
    });
    CHECK(ids == run.ids);
  }
}

TEST_CASE("stories260K: the binary prints llama2.c's text byte for byte") {
  for (const auto& run : reference_runs()) {
    CAPTURE(run.prompt);
    // llama2.c's -n counts every position; kiln's -n counts generated tokens.
    const int n_predict = static_cast<int>(run.ids.size() - run.prompt_ids.size());
    const auto r = kiln::test::run_process(
        {STORIES_BIN, "-p", run.prompt, "-n", std::to_string(n_predict), "--temp", "0", "-t", "1"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == run.stdout_text);
    CHECK(r.err.find("tokens/s") != std::string::npos);
  }
}

TEST_CASE("stories260K: batched ingestion is bit-identical to token by token, whatever the threads") {
  const std::vector<int32_t> ids = reference_runs().at(2).ids;  // 201 tokens
  sequence().set_threads(1);
  const std::vector<float> one_by_one = all_logits(ids, 1);
  for (int threads : {1, 2, 3}) {
    sequence().set_threads(threads, kiln::ThreadFit::Exact);
    for (int chunk : {7, 64, 32 * 1024}) {
      CAPTURE(threads);
      CAPTURE(chunk);
      const std::vector<float> batched = all_logits(ids, std::min(chunk, model().max_batch()));
      CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
    }
  }
  sequence().set_threads(1);
}

TEST_CASE("stories260K: a token too small for a team runs on one thread, a long prompt on two") {
  // 0.09 MFLOP of matrix arithmetic per token and layer (64 wide, 172 ff).
  sequence().set_threads(2);
  CHECK(sequence().threads_for(1) == 1);
  CHECK(sequence().threads_for(22) == 1);
  CHECK(sequence().threads_for(23) == 2);
  CHECK(sequence().threads_for(64) == 2);
  sequence().set_threads(3);
  CHECK(sequence().threads_for(64) == 3);
  sequence().set_threads(2, kiln::ThreadFit::Exact);
  CHECK(sequence().threads_for(1) == 2);
  sequence().set_threads(1);
  CHECK(sequence().threads_for(64) == 1);
}

TEST_CASE("stories260K: agrees with the reference forward pass on prompts nobody listed") {
  const auto file = kiln::GgufFile::open(kiln::models::kiln_test_stories260K::kDefaultGguf);
  kiln::test::ReferenceModel ref(file);
  kiln::SamplerParams greedy;
  greedy.temperature = 0;
  for (const char* prompt : {"Tom had a red kite", "Zzz! 42 cats?", "She said: \"no\"\n\nThe end", "a"}) {
    CAPTURE(prompt);
    kiln::Session session(model());
    kiln::Sampler sampler(greedy, model().n_vocab());
    std::vector<int32_t> ids = model().tokenizer().encode(prompt, true);
    const size_t n_prompt = ids.size();
    kiln::generate(session, ids, 120, sampler, [&](int32_t t) {
      ids.push_back(t);
      return true;
    });
    // Teacher-forced: the reference sees the same tokens and must agree at every step.
    const std::vector<float> logits = all_logits(ids, 64);
    ref.reset();
    float worst = 0;
    for (size_t pos = 0; pos + 1 < ids.size(); ++pos) {
      const std::vector<float> want = ref.step(ids[pos]);
      const float* got = &logits[pos * 512];
      for (int i = 0; i < 512; ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
      if (pos + 1 >= n_prompt) {
        std::vector<float> sorted = want;
        std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
        if (sorted[0] - sorted[1] > 1e-3f) CHECK(argmax(want.data(), 512) == ids[pos + 1]);
      }
    }
    CHECK(worst <= 1e-3f);
  }
}

TEST_CASE("stories260K: a GGUF of another shape is refused with the mismatch named") {
  kiln::synth::SynthSpec spec;
  spec.shape = *kiln::find_preset("stories260k");
  spec.shape.n_layer = 3;
  const std::string path = (std::filesystem::temp_directory_path() / "kiln-e2e-mismatch.gguf").string();
  kiln::synth::make_model(spec).write(path);
  CHECK_THROWS_WITH_AS(kiln::models::kiln_test_stories260K::load(path), doctest::Contains("block_count is 3"), kiln::Error);

  const auto r = kiln::test::run_process({STORIES_BIN, "-m", path, "-p", "hi", "-n", "4"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("does not match this binary: block_count is 3, this binary was compiled for 5") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  std::filesystem::remove(path);
}

TEST_CASE("stories260K binary: bad input gets one line and a non-zero exit") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string truncated = dir + "/kiln-e2e-truncated.gguf";
  {
    const std::string whole = read_file(kDir + "stories260K.gguf");
    std::ofstream(truncated, std::ios::binary).write(whole.data(), 20000);
  }
  const std::string long_prompt = dir + "/kiln-e2e-long-prompt.txt";
  {
    std::ofstream out(long_prompt);
    for (int i = 0; i < 400; ++i) out << "Once upon a time there was a dog. ";
  }
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--bogus"}, "unknown argument '--bogus'"},
      {{"-n", "ten"}, "-n: expected an integer, got 'ten'"},
      {{"-n"}, "-n: missing value"},
      {{"--temp", "warm"}, "--temp: expected a number"},
      {{"--top-p", "1.5"}, "top-p"},
      {{"-m", dir + "/kiln-no-such-file.gguf"}, "kiln-no-such-file.gguf"},
      {{"-m", truncated}, "kiln-e2e-truncated.gguf"},
      {{"-f", dir + "/kiln-no-such-prompt.txt"}, "cannot read prompt file"},
      {{"-f", long_prompt, "-n", "1"}, "context holds 512"},
      {{"--prompt-ids", "1 403 999"}, "token id 999 is outside the vocabulary (0..511)"},
      {{"--prompt-ids", "1 x"}, "--prompt-ids: expected an integer, got 'x'"},
      {{"-p", "hi", "--prompt-ids", "1"}, "not both"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {STORIES_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    CAPTURE(c.message);
    const auto r = kiln::test::run_process(argv);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  std::filesystem::remove(truncated);
  std::filesystem::remove(long_prompt);
}

TEST_CASE("stories260K binary: --prompt-ids and --logits-out reproduce llama2.c's logits") {
  const std::string path = (std::filesystem::temp_directory_path() / "kiln-e2e-logits.txt").string();
  const auto r = kiln::test::run_process(
      {STORIES_BIN, "--prompt-ids", "1 403 407 261 378", "--logits-out", path, "-n", "1", "--temp", "0"});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(read_file(path));
  std::vector<std::vector<float>> rows;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    rows.emplace_back();
    for (float v; in >> v;) rows.back().push_back(v);
  }
  REQUIRE(rows.size() == 5);
  std::istringstream ref(read_file(kDir + "reference-logits.txt"));
  for (std::string line; std::getline(ref, line);) {
    int pos = 0;
    if (std::sscanf(line.c_str(), "LOGITS pos=%d", &pos) != 1) continue;
    REQUIRE(rows.at(size_t(pos)).size() == 512);
    std::istringstream first8(line.substr(line.find("first8:") + 7));
    for (int id = 0; id < 8; ++id) {
      float want = 0;
      first8 >> want;
      CHECK(std::fabs(rows[size_t(pos)][size_t(id)] - want) <= 1e-4f);
    }
  }
  std::filesystem::remove(path);
}
