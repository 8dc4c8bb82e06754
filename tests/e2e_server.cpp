// The server end to end on stories260K: started by the test on a free
// loopback port, driven over HTTP. Its greedy and seeded text is the
// command-line program's for the same prompt and settings, a stream's chunks
// add up to the same text, usage and finish_reason are right, stop strings
// end the text (and a stream never shows part of one), a chat that goes on
// computes only its new turn, bad requests get JSON errors and the server
// keeps serving, requests without the API key get 401, and concurrent
// requests, decoded together in batched steps, each get their solo answer.
#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <thread>

#include "apps/server/stop_text.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/server_process.hpp"

using nlohmann::json;
using kiln::test::get;
using kiln::test::post;
using kiln::test::Reply;
using kiln::test::run_process;
using kiln::test::stream_events;

namespace {

const std::string kPrompt = "Once upon a time";

struct Server : kiln::test::ServerProcess {
  explicit Server(std::vector<std::string> args) : ServerProcess(SERVER_BIN, std::move(args)) {}
};

std::string streamed_text(const std::vector<json>& events, bool chat) {
  std::string text;
  for (const json& e : events) {
    const json& c = e["choices"][0];
    if (chat) text += c["delta"].value("content", "");
    else text += c["text"].get<std::string>();
  }
  return text;
}

// The plain program's text for the prompt (its stdout without the final newline).
std::string cli_text(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {STORIES_BIN, "-p", kPrompt, "--no-display-prompt", "-t", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const auto r = run_process(argv);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.ends_with("\n"));
  return r.out.substr(0, r.out.size() - 1);
}

int prompt_tokens(const std::string& prompt) {
  static auto model = kiln::models::kiln_test_stories260K::load();
  return static_cast<int>(model->tokenizer().encode(prompt, true, true).size());
}

json completion(int max_tokens) { return {{"prompt", kPrompt}, {"max_tokens", max_tokens}, {"temperature", 0}}; }

}  // namespace

TEST_CASE("stop strings end the text, and what might start one is held back") {
  kiln::StopText s({"the end", "xy"});
  CHECK(s.push("Once th") == "Once ");  // "th" may start "the end"
  CHECK(s.push("ere x") == "there ");
  CHECK(s.push("z ") == "xz ");
  CHECK(s.push("and the e") == "and ");
  CHECK(s.push("nd of it") == "");
  CHECK(s.stopped());
  CHECK(s.push("more") == "");
  kiln::StopText open({"\xc3\xa9t\xc3\xa9"});  // "été": held back whole characters, never half of one
  CHECK(open.push("caf\xc3\xa9") == "caf");
  CHECK(open.push("!") == "\xc3\xa9!");
  CHECK(open.push("\xc3\xa9t") == "");
  CHECK(open.flush() == "\xc3\xa9t");
  CHECK_FALSE(open.stopped());
}

TEST_CASE("greedy completions: the program's text, streamed or not, with usage and finish_reason" *
          doctest::timeout(120)) {
  Server server({});
  const std::string expected = cli_text({"-n", "40", "--temp", "0"});
  const Reply r = post(server, "/v1/completions", completion(40).dump());
  REQUIRE(r.status == 200);
  CHECK(r.body["object"] == "text_completion");
  CHECK(r.body["model"] == "kiln_test_stories260K");
  CHECK(r.body["choices"][0]["text"] == expected);
  CHECK(r.body["choices"][0]["finish_reason"] == "length");
  CHECK(r.body["usage"]["prompt_tokens"] == prompt_tokens(kPrompt));
  CHECK(r.body["usage"]["completion_tokens"] == 40);
  CHECK(r.body["usage"]["total_tokens"] == prompt_tokens(kPrompt) + 40);

  const std::vector<json> events = stream_events(server, "/v1/completions", completion(40));
  CHECK(events.size() > 2);
  CHECK(streamed_text(events, false) == expected);
  for (size_t i = 0; i + 1 < events.size(); ++i) CHECK(events[i]["choices"][0]["finish_reason"].is_null());
  CHECK(events.back()["choices"][0]["finish_reason"] == "length");
  CHECK(events.back()["usage"]["completion_tokens"] == 40);
  // The same prompt again: all but its last token were in the cache.
  CHECK(events.back()["usage"]["prompt_tokens_details"]["cached_tokens"] == prompt_tokens(kPrompt) - 1);
}

TEST_CASE("seeded sampling gives the program's text for the same settings" * doctest::timeout(120)) {
  Server server({});
  const std::string expected =
      cli_text({"-n", "30", "--temp", "0.9", "--top-k", "20", "--top-p", "0.8", "--min-p", "0.02", "-s", "1234"});
  const json body = {{"prompt", kPrompt}, {"max_tokens", 30}, {"temperature", 0.9}, {"top_k", 20},
                     {"top_p", 0.8},      {"min_p", 0.02},    {"seed", 1234}};
  CHECK(post(server, "/v1/completions", body.dump()).body["choices"][0]["text"] == expected);
  CHECK(streamed_text(stream_events(server, "/v1/completions", body), false) == expected);
}

TEST_CASE("a stop string ends the text with finish_reason 'stop', streamed or not" * doctest::timeout(120)) {
  Server server({});
  const std::string full = cli_text({"-n", "40", "--temp", "0"});
  // Three tokens of stories260K (" g", "ir", "l") and part of a fourth: a
  // stream must hold each back until the stop string shows.
  const std::string stop = "girl nam";
  const size_t at = full.find(stop);
  REQUIRE(at != std::string::npos);
  json body = completion(40);
  body["stop"] = json::array({"never appears", stop});
  const Reply r = post(server, "/v1/completions", body.dump());
  CHECK(r.body["choices"][0]["text"] == full.substr(0, at));
  CHECK(r.body["choices"][0]["finish_reason"] == "stop");
  CHECK(r.body["usage"]["completion_tokens"].get<int>() < 40);
  const std::vector<json> events = stream_events(server, "/v1/completions", body);
  CHECK(streamed_text(events, false) == full.substr(0, at));
  CHECK(events.back()["choices"][0]["finish_reason"] == "stop");
  REQUIRE(full.substr(0, at).find('g') == std::string::npos);
  for (const json& e : events) CHECK(e["choices"][0]["text"].get<std::string>().find('g') == std::string::npos);
}

TEST_CASE("chat completions: streamed or not, the same text; a conversation that goes on computes only its new turn" *
          doctest::timeout(120)) {
  Server server({});
  json body = {{"messages", {{{"role", "system"}, {"content", "You tell stories."}},
                             {{"role", "user"}, {"content", "A story about a cat."}}}},
               {"max_tokens", 24},
               {"temperature", 0}};
  // The plain program given the conversation as ChatML (stories260K has no template of its own).
  const auto plain = run_process({STORIES_BIN, "-p",
                                  "<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nA story about a "
                                  "cat.<|im_end|>\n<|im_start|>assistant\n",
                                  "--no-display-prompt", "--temp", "0", "-n", "24", "-t", "1"});
  REQUIRE(plain.exit_code == 0);
  const Reply first = post(server, "/v1/chat/completions", body.dump());
  REQUIRE(first.status == 200);
  CHECK(first.body["object"] == "chat.completion");
  const std::string reply = first.body["choices"][0]["message"]["content"];
  CHECK(first.body["choices"][0]["message"]["role"] == "assistant");
  CHECK(reply + "\n" == plain.out);
  CHECK(first.body["choices"][0]["finish_reason"] == "length");

  const std::vector<json> events = stream_events(server, "/v1/chat/completions", body);
  CHECK(events.front()["choices"][0]["delta"]["role"] == "assistant");
  CHECK(events.front()["object"] == "chat.completion.chunk");
  CHECK(streamed_text(events, true) == reply);

  // The next turn: the previous prompt and reply come from the cache, and only the new turn is computed.
  const int before = first.body["usage"]["prompt_tokens"].get<int>() + first.body["usage"]["completion_tokens"].get<int>();
  body["messages"].push_back({{"role", "assistant"}, {"content", reply}});
  body["messages"].push_back({{"role", "user"}, {"content", "And then?"}});
  const Reply next = post(server, "/v1/chat/completions", body.dump());
  REQUIRE(next.status == 200);
  CHECK(next.body["usage"]["prompt_tokens_details"]["cached_tokens"] == before);
  CHECK(next.body["timings"]["cache_n"] == before);
  CHECK(next.body["timings"]["prompt_n"] == next.body["usage"]["prompt_tokens"].get<int>() - before);
  CHECK(next.body["timings"]["prompt_n"].get<int>() > 0);
  const std::string logged = "chat: " + next.body["usage"]["prompt_tokens"].dump() + " prompt tokens, " +
                             std::to_string(before) + " reused";
  CHECK_MESSAGE(server.stderr_text().find(logged) != std::string::npos, server.stderr_text());
}

TEST_CASE("bad requests get OpenAI-style JSON errors, and the server goes on serving" * doctest::timeout(120)) {
  Server server({});
  const auto error_of = [&](const std::string& path, const std::string& body, int status) {
    const Reply r = post(server, path, body);
    CHECK_MESSAGE(r.status == status, body);
    CHECK(r.body["error"]["message"].is_string());
    CHECK(r.body["error"]["code"] == status);
    return r.body["error"];
  };
  CHECK(error_of("/v1/completions", "{\"prompt\": ", 400)["message"].get<std::string>().find("not valid JSON") !=
        std::string::npos);
  CHECK(error_of("/v1/completions", "[1, 2]", 400)["type"] == "invalid_request_error");
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "max_tokens": "many"})", 400)["param"] == "max_tokens");
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "max_tokens": 0})", 400)["param"] == "max_tokens");
  // Beyond the signed range: refused, not wrapped around to -1 (a random seed).
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "seed": 18446744073709551615})", 400)["param"] == "seed");
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "temperature": -1})", 400)["param"] == "temperature");
  // Valid JSON grammar, but no double holds it (found by fuzz_openai_request).
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "temperature": 1E400})", 400)["message"]
            .get<std::string>()
            .find("number out of range") != std::string::npos);
  CHECK(error_of("/v1/completions", R"({"max_tokens": 3})", 400)["param"] == "prompt");
  CHECK(error_of("/v1/completions", R"({"prompt": "a", "stop": [1]})", 400)["param"] == "stop[0]");
  CHECK(error_of("/v1/chat/completions", R"({"messages": [{"role": "wizard", "content": "hi"}]})", 400)["param"] ==
        "messages[0].role");
  CHECK(error_of("/v1/chat/completions", R"({"messages": []})", 400)["param"] == "messages");
  std::string long_prompt;
  for (int i = 0; i < 300; ++i) long_prompt += "Once upon a time ";
  const json too_long = error_of("/v1/completions", json{{"prompt", long_prompt}}.dump(), 400);
  CHECK(too_long["message"].get<std::string>().find("but the context holds 512") != std::string::npos);
  // 7 MB, under the body limit: refused before it is tokenized, as a prompt and as a message.
  const std::string huge(size_t{7} << 20, 'a');
  for (const auto& [path, body] : {std::pair<std::string, json>{"/v1/completions", {{"prompt", huge}}},
                                   {"/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", huge}}}}}}}) {
    CHECK(error_of(path, body.dump(), 400)["message"] ==
          "the prompt is more than 512 tokens, but the context holds 512 (set at build time: kiln_add_model CTX)");
  }
  const Reply missing = get(server, "/v1/nothing");
  CHECK(missing.status == 404);
  CHECK(missing.body["error"]["type"] == "not_found_error");

  const Reply ok = post(server, "/v1/completions", completion(5).dump());
  CHECK(ok.status == 200);
  CHECK(ok.body["usage"]["completion_tokens"] == 5);
}

TEST_CASE("/health, /v1/models and /props" * doctest::timeout(60)) {
  Server server({"--parallel", "3"});
  const Reply health = get(server, "/health");
  CHECK(health.status == 200);
  CHECK(health.body["status"] == "ok");
  CHECK(health.body["slots_idle"] == 3);
  const Reply models = get(server, "/v1/models");
  CHECK(models.body["object"] == "list");
  CHECK(models.body["data"][0]["id"] == "kiln_test_stories260K");
  CHECK(models.body["data"][0]["meta"]["n_ctx"] == 512);
  const Reply props = get(server, "/props");
  CHECK(props.body["total_slots"] == 3);
  CHECK(props.body["concurrency"].get<std::string>().starts_with("batched"));
}

TEST_CASE("--api-key: 401 without it, served with it; /health is open" * doctest::timeout(60)) {
  Server server({"--api-key", "secret", "--alias", "storyteller"});
  const Reply none = post(server, "/v1/completions", completion(3).dump());
  CHECK(none.status == 401);
  CHECK(none.body["error"]["type"] == "authentication_error");
  CHECK(post(server, "/v1/completions", completion(3).dump(), {{"Authorization", "Bearer wrong"}}).status == 401);
  CHECK(get(server, "/v1/models").status == 401);
  const Reply with = post(server, "/v1/completions", completion(3).dump(), {{"Authorization", "Bearer secret"}});
  CHECK(with.status == 200);
  CHECK(with.body["model"] == "storyteller");
  CHECK(get(server, "/health").status == 200);
}

namespace {

// The text of a reply: one JSON answer, or a stream's chunks put together.
std::string reply_text(const std::string& body, bool streamed, bool chat) {
  if (!streamed) {
    const json reply = json::parse(body);
    const json& choice = reply["choices"][0];
    return chat ? choice["message"]["content"] : choice["text"];
  }
  std::vector<json> events;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("data: {")) events.push_back(json::parse(line.substr(6)));
  return streamed_text(events, chat);
}

}  // namespace

TEST_CASE("concurrent requests, decoded together, each get their solo answer" * doctest::timeout(120)) {
  // More requests than slots, with prompts and lengths that differ, so that
  // sequences at different positions share steps, requests end at different
  // steps and waiting ones join the others mid-way; greedy, seeded and chat.
  Server server({"--parallel", "3"});
  std::vector<json> bodies;
  const std::vector<std::string> prompts = {"Once upon a time", "Lily", "The dog was very happy because", "One day",
                                            "Tom and his mom went to the park. They saw a big tree"};
  for (size_t i = 0; i < prompts.size(); ++i)
    bodies.push_back({{"prompt", prompts[i]}, {"max_tokens", 20 + 37 * int(i) % 90}, {"temperature", 0}});
  bodies[3]["temperature"] = 0.8;
  bodies[3]["seed"] = 42;
  bodies.push_back({{"messages", {{{"role", "user"}, {"content", "A story about a cat."}}}}, {"max_tokens", 50},
                    {"temperature", 0}});
  auto path = [](const json& body) { return body.contains("messages") ? "/v1/chat/completions" : "/v1/completions"; };
  std::vector<std::string> solo;
  for (const json& body : bodies) {
    const Reply r = post(server, path(body), body.dump());
    REQUIRE(r.status == 200);
    solo.push_back(reply_text(r.body.dump(), false, body.contains("messages")));
  }
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    std::vector<std::string> together(bodies.size());
    std::vector<std::thread> clients;
    for (size_t i = 0; i < bodies.size(); ++i)
      clients.emplace_back([&, i] {
        json body = bodies[i];
        const bool streamed = (i + size_t(round)) % 2 == 1;
        body["stream"] = streamed;
        auto res = server.client().Post(path(body), body.dump(), "application/json");
        if (res && res->status == 200) together[i] = reply_text(res->body, streamed, body.contains("messages"));
      });
    for (auto& c : clients) c.join();
    for (size_t i = 0; i < bodies.size(); ++i) {
      CAPTURE(i);
      CHECK(together[i] == solo[i]);
    }
  }
  // Whether requests overlapped depends on how the threads ran; the log says.
  const std::string log = server.stderr_text();
  WARN_MESSAGE(log.find("in steps of up to 3 sequences") != std::string::npos, log);
}

TEST_CASE("bad flags: one line and exit status 1") {
  const auto unknown = run_process({SERVER_BIN, "--frobnicate"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err == "kiln_test_stories260K-server: error: unknown argument '--frobnicate' (see --help)\n");
  const auto ctx = run_process({SERVER_BIN, "-c", "4096"});
  CHECK(ctx.exit_code == 1);
  CHECK(ctx.err.find("fixed when the model is compiled") != std::string::npos);
  const auto port = run_process({SERVER_BIN, "--port", "70000"});
  CHECK(port.exit_code == 1);
  const auto help = run_process({SERVER_BIN, "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--parallel") != std::string::npos);
}
