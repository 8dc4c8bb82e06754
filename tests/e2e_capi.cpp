// The C API (capi/kiln.h) of lib<name>.so, built for stories260K: its
// examples in C (examples/c) and Python (examples/python, ctypes), and the
// C++ example (examples/cpp, on the model's C++ interface), print the
// command-line program's greedy text byte for byte, and every function
// reports bad input through its return value and kiln_last_error().
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/arch/cpu_features.hpp"
#include "kiln.h"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

#if defined(__has_feature)
#define KILN_CLANG_ASAN __has_feature(address_sanitizer)
#else
#define KILN_CLANG_ASAN 0
#endif

namespace {

using Tokens = std::vector<int32_t>;

const char* const kPrompts[] = {"Once upon a time", "Lily and Tom", "The sun was hot. <s> A bird"};

struct Handles {
  kiln_model* model = kiln_model_load(nullptr);
  kiln_session* session = nullptr;
  Handles() {
    REQUIRE_MESSAGE(model, kiln_last_error());
    kiln_sampling greedy = kiln_sampling_default();
    greedy.temperature = 0;
    session = kiln_session_new(model, &greedy, 1);
    REQUIRE_MESSAGE(session, kiln_last_error());
  }
  ~Handles() {
    kiln_session_free(session);
    kiln_model_free(model);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
};

Tokens tokenize(kiln_model* model, const std::string& text) {
  const int32_t n = kiln_tokenize(model, text.data(), text.size(), 1, 1, nullptr, 0);
  REQUIRE(n > 0);
  Tokens ids(static_cast<size_t>(n));
  REQUIRE(kiln_tokenize(model, text.data(), text.size(), 1, 1, ids.data(), n) == n);
  return ids;
}

std::string last_error() { return kiln_last_error(); }

// The Python example's command. In a sanitizer build the library needs its
// runtime loaded first, which the (uninstrumented) interpreter does not do.
std::vector<std::string> python_example(const char* prompt) {
  std::vector<std::string> argv = {PYTHON, PY_EXAMPLE, SHARED_LIBRARY, "-p", prompt, "-n", "60"};
  if (const char* preload = std::getenv("KILN_PYTHON_PRELOAD"))
    argv.insert(argv.begin(), {"/usr/bin/env", std::string("LD_PRELOAD=") + preload, "ASAN_OPTIONS=detect_leaks=0"});
  return argv;
}

int keep_token(void* user_data, int32_t token, const char*, size_t) {
  static_cast<Tokens*>(user_data)->push_back(token);
  return 1;
}

}  // namespace

TEST_CASE("the C, C++ and Python examples print the command-line program's greedy text") {
  for (const char* prompt : kPrompts) {
    CAPTURE(prompt);
    const auto cli = kiln::test::run_process({STORIES_BIN, "-p", prompt, "-n", "60", "--temp", "0", "-t", "1"});
    REQUIRE(cli.exit_code == 0);
    const auto c = kiln::test::run_process({C_EXAMPLE, "-p", prompt, "-n", "60"});
    CHECK(c.exit_code == 0);
    CHECK(c.out == cli.out);
    const auto cpp = kiln::test::run_process({CPP_EXAMPLE, prompt, "60"});
    CHECK_MESSAGE(cpp.exit_code == 0, cpp.err);
    CHECK(cpp.out == cli.out);
    const auto py = kiln::test::run_process(python_example(prompt));
    CHECK_MESSAGE(py.exit_code == 0, py.err);
    CHECK(py.out == cli.out);
  }
  const auto missing = kiln::test::run_process({C_EXAMPLE, "-m", "/nonexistent.gguf", "-p", "x"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("/nonexistent.gguf") != std::string::npos);
}

TEST_CASE("generation through the C API stops when the callback says so, and feeding and sampling match it") {
  Handles h;
  const Tokens prompt = tokenize(h.model, kPrompts[0]);
  Tokens all;
  REQUIRE(kiln_generate(h.session, prompt.data(), int32_t(prompt.size()), 30, keep_token, &all) == 30);
  CHECK(kiln_session_n_past(h.session) == int32_t(prompt.size() + 30));

  struct Stop {
    Tokens seen;
  } stop;
  auto stop_after_5 = [](void* user_data, int32_t token, const char*, size_t) {
    auto* s = static_cast<Stop*>(user_data);
    s->seen.push_back(token);
    return s->seen.size() < 5 ? 1 : 0;
  };
  REQUIRE(kiln_session_reset(h.session) == 0);
  CHECK(kiln_generate(h.session, prompt.data(), int32_t(prompt.size()), 30, stop_after_5, &stop) == 5);
  CHECK(stop.seen == Tokens(all.begin(), all.begin() + 5));

  // The same by hand: feed, sample, feed.
  REQUIRE(kiln_session_reset(h.session) == 0);
  CHECK(kiln_logits(h.session) == nullptr);
  REQUIRE(kiln_feed(h.session, prompt.data(), int32_t(prompt.size())) == 0);
  REQUIRE(kiln_logits(h.session) != nullptr);
  Tokens by_hand;
  for (int i = 0; i < 30; ++i) {
    const int32_t t = kiln_sample(h.session);
    REQUIRE(t >= 0);
    by_hand.push_back(t);
    REQUIRE(kiln_feed(h.session, &t, 1) == 0);
  }
  CHECK(by_hand == all);
}

TEST_CASE("a session's state saved through the C API continues in another session") {
  const kiln::test::TempFolder dir("capi");
  const std::string path = dir.file("s.state");
  Handles a, b;
  const Tokens prompt = tokenize(a.model, kPrompts[1]);
  Tokens want, got;
  REQUIRE(kiln_generate(a.session, prompt.data(), int32_t(prompt.size()), 20, keep_token, &want) == 20);
  REQUIRE(kiln_session_reset(a.session) == 0);
  REQUIRE(kiln_feed(a.session, prompt.data(), int32_t(prompt.size())) == 0);
  REQUIRE(kiln_session_save(a.session, path.c_str()) == 0);
  REQUIRE(kiln_session_load(b.session, path.c_str()) == 0);
  CHECK(kiln_session_n_past(b.session) == int32_t(prompt.size()));
  REQUIRE(kiln_generate(b.session, prompt.data(), int32_t(prompt.size()), 20, keep_token, &got) == 20);
  CHECK(got == want);
  CHECK(kiln_session_load(b.session, dir.file("missing").c_str()) == -1);
  CHECK(last_error().find("missing") != std::string::npos);
}

TEST_CASE("a refused kiln_feed changes nothing: the last logits stay readable and sampling goes on") {
  Handles h;
  const int32_t n_ctx = kiln_model_n_ctx(h.model);
  const Tokens start = tokenize(h.model, kPrompts[0]);
  REQUIRE(kiln_feed(h.session, start.data(), int32_t(start.size())) == 0);
  const int32_t n_vocab = kiln_model_n_vocab(h.model);
  const std::vector<float> logits(kiln_logits(h.session), kiln_logits(h.session) + n_vocab);
  const int32_t next = kiln_sample(h.session);
  REQUIRE(next >= 0);

  const Tokens too_many(size_t(n_ctx), 100);  // more than the context has left
  CHECK(kiln_feed(h.session, too_many.data(), int32_t(too_many.size())) == -1);
  CHECK(last_error().find("do not fit in the context") != std::string::npos);
  CHECK(kiln_session_n_past(h.session) == int32_t(start.size()));
  const float* after = kiln_logits(h.session);
  REQUIRE_MESSAGE(after, last_error());
  CHECK(std::vector<float>(after, after + n_vocab) == logits);
  CHECK(kiln_sample(h.session) == next);

  // A full context refuses even one more token, and still samples.
  const Tokens fill(size_t(n_ctx) - start.size(), 100);
  REQUIRE(kiln_feed(h.session, fill.data(), int32_t(fill.size())) == 0);
  const int32_t last = kiln_sample(h.session);
  CHECK(kiln_feed(h.session, &last, 1) == -1);
  CHECK(kiln_logits(h.session) != nullptr);
  CHECK(kiln_sample(h.session) == last);
}

TEST_CASE("kiln_tokenize gives up early on a text longer than both the context and the array") {
  Handles h;
  const int32_t n_ctx = kiln_model_n_ctx(h.model);
  const std::string huge(size_t{100} << 20, 'a');
  const auto start = std::chrono::steady_clock::now();
  CHECK(kiln_tokenize(h.model, huge.data(), huge.size(), 1, 1, nullptr, 0) == -1);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.0);
  CHECK(last_error() == "kiln_tokenize: the text is more than " + std::to_string(n_ctx) +
                            " tokens, more than the context (" + std::to_string(n_ctx) + ") and `capacity` hold");

  // Longer than the context, but a large enough array takes it all.
  std::string story;
  while (story.size() < 8 * size_t(n_ctx)) story += "Once upon a time there was a dog. ";
  CHECK(kiln_tokenize(h.model, story.data(), story.size(), 1, 1, nullptr, 0) == -1);
  Tokens ids(4 * size_t(n_ctx));
  const int32_t n = kiln_tokenize(h.model, story.data(), story.size(), 1, 1, ids.data(), int32_t(ids.size()));
  CHECK(n > n_ctx);
  CHECK(n <= int32_t(ids.size()));
}

// The library built for this machine (-march=native here, where CI has
// AVX-512), loaded by the C example on an emulated CPU without what it was
// compiled for: kiln_model_load says so, and the host goes on to report it
// and exit as it chooses, instead of being ended by the library.
TEST_CASE("on a CPU without what the library was compiled for, kiln_model_load refuses and the host goes on") {
  constexpr uint32_t kHaswell = kiln::cpu::kSse3 | kiln::cpu::kSsse3 | kiln::cpu::kSse41 | kiln::cpu::kSse42 |
                                kiln::cpu::kPopcnt | kiln::cpu::kAvx | kiln::cpu::kAvx2 | kiln::cpu::kFma |
                                kiln::cpu::kF16c | kiln::cpu::kBmi2;
  const char* const qemu = "/usr/bin/qemu-x86_64";
#if defined(__SANITIZE_ADDRESS__) || KILN_CLANG_ASAN  // GCC's macro, Clang's feature test
  MESSAGE("skipped: the sanitizers' runtime does not run under qemu-user");
  return;
#endif
  if ((kiln::cpu::kRequiredFeatures & ~kHaswell) == 0 || ::access(qemu, X_OK) != 0) {
    MESSAGE("skipped: needs qemu-user (Debian's qemu-user) and a build for more than a Haswell CPU has");
    return;
  }
  const auto r = kiln::test::run_process({qemu, "-cpu", "Haswell", C_EXAMPLE, "-p", "Once", "-n", "4"});
  CHECK(r.exit_code == 1);  // the example's own exit, after kiln_model_load returned NULL
  CHECK(r.out.empty());
  // After qemu's warnings about the CPU it emulates: the example's one line.
  const size_t line = r.err.rfind('\n', r.err.size() - 2) + 1;
  CHECK(r.err.substr(line).starts_with("generate: kiln_model_load: this binary needs "));
  CHECK(r.err.substr(line).find("; this CPU lacks") != std::string::npos);
}

TEST_CASE("the C API reports bad input through return values and kiln_last_error") {
  CHECK(kiln_model_load("/nonexistent.gguf") == nullptr);
  CHECK(last_error().find("/nonexistent.gguf") != std::string::npos);
  CHECK(kiln_model_n_vocab(nullptr) == -1);
  CHECK(last_error() == "kiln_model_n_vocab: model is NULL");
  CHECK(kiln_session_new(nullptr, nullptr, 1) == nullptr);

  Handles h;
  CHECK(kiln_model_n_vocab(h.model) == 512);
  CHECK(kiln_token_is_eog(h.model, 2) == 1);
  CHECK(kiln_token_is_eog(h.model, 100) == 0);
  CHECK(kiln_token_is_eog(h.model, 512) == -1);
  const int32_t bad[] = {1, 9999};
  CHECK(kiln_feed(h.session, bad, 2) == -1);
  CHECK(last_error().find("9999") != std::string::npos);
  CHECK(kiln_feed(h.session, bad, -1) == -1);
  CHECK(kiln_feed(h.session, nullptr, 0) == -1);
  CHECK(kiln_sample(h.session) == -1);
  CHECK(last_error().find("feed tokens first") != std::string::npos);
  CHECK(kiln_detokenize(h.model, bad, 2, nullptr, 0) == -1);

  // A buffer too small gets nothing written; the size needed comes back.
  const Tokens ids = tokenize(h.model, kPrompts[0]);
  int32_t small[2] = {-7, -7};
  CHECK(kiln_tokenize(h.model, kPrompts[0], std::strlen(kPrompts[0]), 1, 1, small, 2) == int32_t(ids.size()));
  CHECK(small[0] == -7);
  char text[8] = "xxxxxxx";
  const int64_t length = kiln_detokenize(h.model, ids.data(), int32_t(ids.size()), text, sizeof text);
  CHECK(length == int64_t(std::strlen(kPrompts[0])));
  CHECK(text[0] == 'x');
  std::string full(size_t(length) + 1, '\0');
  CHECK(kiln_detokenize(h.model, ids.data(), int32_t(ids.size()), full.data(), full.size()) == length);
  CHECK(full.c_str() == std::string(kPrompts[0]));

  // A prompt longer than the context.
  const Tokens too_long(size_t(kiln_model_n_ctx(h.model)) + 1, 100);
  CHECK(kiln_generate(h.session, too_long.data(), int32_t(too_long.size()), 1, nullptr, nullptr) == -1);
  CHECK(last_error().find("context") != std::string::npos);
  CHECK(kiln_session_set_threads(h.session, 2) == 2);
}
