// The server's prefix reuse across requests, end to end on stories260K: a
// request is steered to the slot whose cache shares the longest prefix with
// it; a prompt whose prefix another slot computed is seeded from the prefix
// cache (--cache-ram), computes only its new tokens (usage's cached_tokens
// and the log line say so) and gets the text of a solo run; the cache evicts
// its least recently used entry to keep to its budget; --cache-ram 0 turns it
// off; and more slots than the model's batch (BATCH 64) serve concurrent
// requests, each with its solo answer.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "engine/session/session_state.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/server_process.hpp"

using nlohmann::json;
using kiln::test::post;
using kiln::test::Reply;
using kiln::test::ServerProcess;

namespace {

const kiln::Model& model() {
  static const auto m = kiln::models::kiln_test_stories260K::load();
  return *m;
}

std::vector<int32_t> tokens(const std::string& prompt) { return model().tokenizer().encode(prompt, true, true); }

int shared(const std::string& a, const std::string& b) {
  return static_cast<int>(kiln::common_prefix_length(tokens(a), tokens(b)));
}

// A greedy completion of `n` tokens; must succeed.
json complete(const ServerProcess& server, const std::string& prompt, int n = 8) {
  const Reply r = post(server, "/v1/completions",
                       json{{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}}.dump());
  REQUIRE_MESSAGE(r.status == 200, r.body.dump());
  return r.body;
}

int cached(const json& reply) { return reply["usage"]["prompt_tokens_details"]["cached_tokens"]; }
std::string text(const json& reply) { return reply["choices"][0]["text"]; }

// The command-line program's greedy text for the prompt: a solo run.
std::string solo_text(const std::string& prompt, int n = 8) {
  const auto r = kiln::test::run_process(
      {STORIES_BIN, "-p", prompt, "--no-display-prompt", "-t", "1", "--temp", "0", "-n", std::to_string(n)});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.ends_with("\n"));
  return r.out.substr(0, r.out.size() - 1);
}

bool logged(const ServerProcess& server, const std::string& line) {
  return server.stderr_text().find(line) != std::string::npos;
}

const std::string kShared =
    "Lily and Tom went to the park. They played with a red ball and ran after a little dog. The dog was happy and "
    "wagged its tail. ";
const std::string kFirst = kShared + "Then they sat";
const std::string kSecond = kShared + "The sun was";
const std::string kOther = "One day a girl";
const std::string kThird = "A cat sat on a mat";

}  // namespace

TEST_CASE("a prompt whose prefix another slot computed comes from the prefix cache, with a solo run's text" *
          doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {"--parallel", "2"});
  CHECK(logged(server, "prefix cache 8192 MiB"));
  // Slots are taken least recently used first when no cache shares enough:
  // kFirst goes to slot 0, kOther to 1, kThird to 0 (kFirst's state goes to
  // the prefix cache), and kSecond to slot 1, which never held its prefix.
  complete(server, kFirst);
  complete(server, kOther);
  complete(server, kThird);
  const json second = complete(server, kSecond);
  const int expected = shared(kFirst, kSecond);
  REQUIRE(expected > 20);
  CHECK(cached(second) == expected);
  CHECK(second["usage"]["prompt_tokens"] == static_cast<int>(tokens(kSecond).size()));
  CHECK(second["timings"]["prompt_n"] == static_cast<int>(tokens(kSecond).size()) - expected);
  CHECK(text(second) == solo_text(kSecond));
  const std::string line = "slot 1: completion: " + std::to_string(tokens(kSecond).size()) + " prompt tokens, " +
                           std::to_string(expected) + " reused (" + std::to_string(expected) +
                           " from the prefix cache)";
  CHECK_MESSAGE(logged(server, line), server.stderr_text());
}

TEST_CASE("a chat goes on from the prefix cache in another slot, with a fresh server's text" * doctest::timeout(120)) {
  json turn = {{"messages", {{{"role", "system"}, {"content", "You tell stories about animals and their friends."}},
                             {{"role", "user"}, {"content", "A story about a cat."}}}},
               {"max_tokens", 12},
               {"temperature", 0}};
  ServerProcess server(SERVER_BIN, {"--parallel", "2"});
  const Reply first = post(server, "/v1/chat/completions", turn.dump());
  REQUIRE(first.status == 200);
  complete(server, kOther);  // slot 1
  complete(server, kThird);  // slot 0: the conversation goes to the prefix cache
  turn["messages"].push_back({{"role", "assistant"}, {"content", first.body["choices"][0]["message"]["content"]}});
  turn["messages"].push_back({{"role", "user"}, {"content", "And then?"}});
  const Reply next = post(server, "/v1/chat/completions", turn.dump());  // slot 1
  REQUIRE(next.status == 200);
  const int prompt_before = first.body["usage"]["prompt_tokens"];
  CHECK(cached(next.body) >= prompt_before);  // the first turn's prompt at least; its reply as far as it tokenizes the same
  CHECK_MESSAGE(logged(server, "slot 1: chat: " + next.body["usage"]["prompt_tokens"].dump() + " prompt tokens"),
                server.stderr_text());
  ServerProcess fresh(SERVER_BIN, {"--cache-ram", "0"});
  const Reply alone = post(fresh, "/v1/chat/completions", turn.dump());
  REQUIRE(alone.status == 200);
  CHECK(cached(alone.body) == 0);
  CHECK(alone.body["choices"][0]["message"]["content"] == next.body["choices"][0]["message"]["content"]);
  CHECK(alone.body["usage"]["prompt_tokens"] == next.body["usage"]["prompt_tokens"]);
}

TEST_CASE("--cache-ram 0: no prefix cache, but requests still go to the slot that shares their prefix" *
          doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {"--parallel", "2", "--cache-ram", "0"});
  CHECK(logged(server, "no prefix cache"));
  complete(server, kFirst);  // slot 0
  complete(server, kOther);  // slot 1
  // Steered to slot 0, whose cache holds kShared, though slot 0 was taken less recently.
  const json second = complete(server, kSecond);
  CHECK(cached(second) == shared(kFirst, kSecond));
  CHECK_MESSAGE(logged(server, "slot 0: completion: " + std::to_string(tokens(kSecond).size()) + " prompt tokens, " +
                                   std::to_string(shared(kFirst, kSecond)) + " reused, "),
                server.stderr_text());
  // Overwritten and not kept: kThird goes to slot 1, kOther to slot 0, and kFirst's prefix is gone.
  complete(server, kThird);
  complete(server, kOther);
  const json again = complete(server, kFirst + " and");
  CHECK(cached(again) <= 1);
  CHECK(text(again) == solo_text(kFirst + " and"));
  CHECK_FALSE(logged(server, "from the prefix cache"));
}

TEST_CASE("a tiny --cache-ram evicts the least recently used prefix" * doctest::timeout(120)) {
  // Prompts of whose states one fits in 1 MiB and two do not.
  const size_t per_token = model().kv_layout().bytes_per_position() + sizeof(int32_t);
  const size_t n_tokens = (size_t{1} << 19) / per_token + 24;  // a prompt has n_tokens - 16 to n_tokens
  REQUIRE(2 * (n_tokens - 16) * per_token > (size_t{1} << 20));
  REQUIRE((n_tokens + 8) * per_token <= (size_t{1} << 20));
  REQUIRE(n_tokens + 16 < static_cast<size_t>(model().n_ctx()));
  const auto long_prompt = [&](const std::string& sentence) {
    std::string p;
    while (tokens(p + sentence).size() <= n_tokens) p += sentence;
    return p;
  };
  const std::string a = long_prompt("Lily liked to play with her ball in the garden. ");
  const std::string b = long_prompt("Tom had a big red truck and he drove it all day. ");
  const std::string c = long_prompt("The little bird sang a happy song in the tall tree. ");
  ServerProcess server(SERVER_BIN, {"--cache-ram", "1"});
  complete(server, a, 4);
  complete(server, b, 4);  // a goes to the cache
  complete(server, c, 4);  // b goes to the cache, which evicts a
  const json b_again = complete(server, b + "Tom", 4);  // seeded with b; c goes to the cache and evicts b
  CHECK(cached(b_again) == shared(b, b + "Tom"));
  CHECK(cached(b_again) > static_cast<int>(n_tokens) / 2);
  const json a_again = complete(server, a + "Lily", 4);
  CHECK(cached(a_again) <= 1);
  CHECK(text(a_again) == solo_text(a + "Lily", 4));
}

TEST_CASE("more slots than the model's batch: concurrent requests each get their solo answer" * doctest::timeout(240)) {
  REQUIRE(model().max_batch() == 64);
  const int n = 66;
  ServerProcess server(SERVER_BIN, {"--parallel", std::to_string(n - 1)});
  const std::vector<std::string> starts = {"Once upon a time", "Lily", "The dog", "One day", "Tom and his mom",
                                           "A little bird", "The sun"};
  std::vector<std::string> prompts;
  for (int i = 0; i < n; ++i) prompts.push_back(starts[size_t(i) % starts.size()] + std::string(size_t(i / 7), '!'));
  std::vector<std::string> solo;
  for (const std::string& p : prompts) solo.push_back(text(complete(server, p, 6)));
  std::vector<std::string> together(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i)
    clients.emplace_back([&, i] {
      auto res = server.client().Post(
          "/v1/completions", json{{"prompt", prompts[i]}, {"max_tokens", 6}, {"temperature", 0}}.dump(),
          "application/json");
      if (!res) together[i] = std::string("(no answer: ").append(httplib::to_string(res.error())).append(")");
      else if (res->status != 200) together[i] = std::string("(HTTP ").append(std::to_string(res->status)).append(")");
      else together[i] = text(json::parse(res->body));
    });
  for (auto& c : clients) c.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    CAPTURE(i);
    CHECK(together[i] == solo[i]);
  }
  // Whether requests overlapped depends on how the threads ran; the log says.
  WARN_MESSAGE(logged(server, "in steps of up to 64 sequences"), server.stderr_text());
}

TEST_CASE("--cache-ram: in --help; a value below -1 or not a number is one line and exit status 1") {
  CHECK(kiln::test::run_process({SERVER_BIN, "--help"}).out.find("--cache-ram N") != std::string::npos);
  for (const char* bad : {"-2", "lots"}) {
    const auto r = kiln::test::run_process({SERVER_BIN, "--cache-ram", bad});
    CHECK(r.exit_code == 1);
    CHECK(r.err.starts_with("kiln_test_stories260K-server: error: --cache-ram"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
