// The server's scores, choices, penalties and metrics end to end on
// stories260K: logprobs are the log-softmax of the model's logits (greedy's
// token is the likeliest; recomputed here in-process; an echoed prompt's
// equal those of the program's --logits-out), in OpenAI's chat and legacy
// shapes, streamed too; n choices each equal a solo request with its seed
// and share the prompt's KV; a prompt may be token ids; presence and frequency penalties change the
// text as the program's flags do; /metrics is Prometheus text whose counts
// move; bad values get one-line 400s.
#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "engine/session/session.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/server_process.hpp"
#include "tests/support/temp_folder.hpp"

using nlohmann::json;
using kiln::test::post;
using kiln::test::Reply;
using kiln::test::ServerProcess;
using kiln::test::run_process;
using kiln::test::stream_events;

namespace {

const std::string kPrompt = "Once upon a time";

const kiln::Model& model() {
  static const auto m = kiln::models::kiln_test_stories260K::load();
  return *m;
}

std::vector<int32_t> prompt_tokens(const std::string& prompt) { return kiln::tokenize_prompt(model(), prompt); }

// log-softmax(logits)[token], in double.
double logprob(std::span<const float> logits, int32_t token) {
  double max = logits[0];
  for (float l : logits) max = std::max(max, double(l));
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - max);
  return double(logits[size_t(token)]) - max - std::log(sum);
}

// The greedy continuation of the prompt, token by token, with each token's
// log-probability, computed here on the model.
std::vector<std::pair<int32_t, double>> greedy_scores(const std::string& prompt, int n) {
  kiln::Session session(model());
  std::span<const float> logits = session.ingest_prompt(prompt_tokens(prompt));
  std::vector<std::pair<int32_t, double>> out;
  for (int i = 0; i < n; ++i) {
    const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.emplace_back(best, logprob(logits, best));
    const int32_t one[] = {best};
    logits = session.ingest(one);
  }
  return out;
}

// A top_logprobs list is sorted, every entry <= 0, and their probabilities sum to at most 1.
void check_alternatives(const std::vector<double>& logprobs) {
  double total = 0;
  for (size_t i = 0; i < logprobs.size(); ++i) {
    CHECK(logprobs[i] <= 0);
    if (i > 0) CHECK(logprobs[i] <= logprobs[i - 1]);
    total += std::exp(logprobs[i]);
  }
  CHECK(total <= 1.0 + 1e-5);
}

std::string one_line_error(const ServerProcess& server, const std::string& path, const json& body, const std::string& param) {
  const Reply r = post(server, path, body.dump());
  CHECK_MESSAGE(r.status == 400, body.dump());
  CHECK_MESSAGE(r.body["error"]["param"] == param, r.body.dump());
  const std::string message = r.body["error"]["message"];
  CHECK(message.find('\n') == std::string::npos);
  return message;
}

}  // namespace

TEST_CASE("completion logprobs: the greedy tokens with the model's log-softmax, the likeliest first" *
          doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {});
  const int n = 12;
  const json body = {{"prompt", kPrompt}, {"max_tokens", n}, {"temperature", 0}, {"logprobs", 3}};
  const Reply r = post(server, "/v1/completions", body.dump());
  REQUIRE(r.status == 200);
  const json& lp = r.body["choices"][0]["logprobs"];
  const auto expected = greedy_scores(kPrompt, n);
  REQUIRE(lp["tokens"].size() == size_t(n));
  std::string joined;
  for (int i = 0; i < n; ++i) {
    const std::string token = lp["tokens"][i];
    CHECK(token == std::string(model().tokenizer().text(expected[size_t(i)].first)));
    CHECK(lp["token_logprobs"][i].get<double>() == doctest::Approx(expected[size_t(i)].second).epsilon(1e-5));
    CHECK(lp["text_offset"][i] == joined.size());
    joined += token;
    // Greedy: the token is the likeliest, first among the alternatives.
    const json& top = lp["top_logprobs"][i];
    REQUIRE(top.size() >= 1);
    REQUIRE(top.size() <= 3);
    CHECK(top.contains(token));
    std::vector<double> values;
    for (const auto& [text, value] : top.items()) values.push_back(value.get<double>());
    std::sort(values.rbegin(), values.rend());
    CHECK(values[0] == doctest::Approx(lp["token_logprobs"][i].get<double>()));
    check_alternatives(values);
  }
  CHECK(joined == r.body["choices"][0]["text"]);

  // A stop string: the tokens whose text starts before the returned text
  // ends are scored, the rest (the stop string's) are not; streamed the same.
  const size_t from = lp["text_offset"][6];
  const std::string stop = joined.substr(from, 3);
  const size_t end = joined.find(stop);
  size_t kept = 0;
  while (kept < size_t(n) && lp["text_offset"][kept].get<size_t>() < end) ++kept;
  json stopped = body;
  stopped["stop"] = stop;
  const Reply cut = post(server, "/v1/completions", stopped.dump());
  CHECK(cut.body["choices"][0]["text"] == joined.substr(0, end));
  CHECK(cut.body["choices"][0]["finish_reason"] == "stop");
  const json& cut_lp = cut.body["choices"][0]["logprobs"];
  REQUIRE(cut_lp["tokens"].size() == kept);
  for (size_t i = 0; i < kept; ++i) CHECK(cut_lp["tokens"][i] == lp["tokens"][i]);
  json streamed_tokens = json::array();
  for (const json& e : stream_events(server, "/v1/completions", stopped)) {
    const json& chunk_lp = e["choices"][0]["logprobs"];
    if (!chunk_lp.is_null())
      for (const json& t : chunk_lp["tokens"]) streamed_tokens.push_back(t);
  }
  CHECK(streamed_tokens == cut_lp["tokens"]);

  // Without logprobs: null.
  const Reply plain = post(server, "/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 2}}.dump());
  CHECK(plain.body["choices"][0]["logprobs"].is_null());
}

TEST_CASE("chat logprobs in OpenAI's shape, the same streamed" * doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {});
  const json body = {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
                     {"max_tokens", 16},
                     {"temperature", 0},
                     {"logprobs", true},
                     {"top_logprobs", 5}};
  const Reply r = post(server, "/v1/chat/completions", body.dump());
  REQUIRE(r.status == 200);
  const json& content = r.body["choices"][0]["logprobs"]["content"];
  REQUIRE(content.size() == r.body["usage"]["completion_tokens"].get<size_t>());
  REQUIRE(!content.empty());
  std::string joined;
  for (const json& entry : content) {
    const std::string token = entry["token"];
    joined += token;
    json bytes = json::array();
    for (unsigned char c : token) bytes.push_back(c);
    CHECK(entry["bytes"] == bytes);
    REQUIRE(entry["top_logprobs"].size() == 5);
    CHECK(entry["top_logprobs"][0]["token"] == token);  // greedy
    CHECK(entry["top_logprobs"][0]["logprob"] == entry["logprob"]);
    std::vector<double> values;
    for (const json& t : entry["top_logprobs"]) values.push_back(t["logprob"]);
    check_alternatives(values);
  }
  CHECK(joined == r.body["choices"][0]["message"]["content"]);

  // Streamed: each chunk scores the tokens whose text starts in it; together the same list.
  json streamed = json::array();
  std::string text;
  for (const json& e : stream_events(server, "/v1/chat/completions", body)) {
    const json& choice = e["choices"][0];
    text += choice["delta"].value("content", "");
    if (choice["logprobs"].is_null()) continue;
    for (const json& entry : choice["logprobs"]["content"]) streamed.push_back(entry);
  }
  CHECK(text == r.body["choices"][0]["message"]["content"]);
  CHECK(streamed == content);

  // logprobs without top_logprobs: no alternatives.
  json bare = body;
  bare.erase("top_logprobs");
  const Reply b = post(server, "/v1/chat/completions", bare.dump());
  CHECK(b.body["choices"][0]["logprobs"]["content"][0]["top_logprobs"] == json::array());
}

TEST_CASE("echo scores the prompt's own tokens as the program's --logits-out gives them; max_tokens 0 works" *
          doctest::timeout(120)) {
  const std::string prompt = "Lily and Tom went to the park. They played";
  const std::vector<int32_t> tokens = prompt_tokens(prompt);
  kiln::test::TempFolder folder("scores-echo");
  const std::string path = folder.file("logits.txt");
  REQUIRE(run_process({STORIES_BIN, "-p", prompt, "--logits-out", path, "-n", "1", "-t", "1"}).exit_code == 0);
  std::vector<std::vector<float>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream numbers(line);
    rows.emplace_back(std::istream_iterator<float>(numbers), std::istream_iterator<float>());
  }
  REQUIRE(rows.size() == tokens.size());

  ServerProcess server(SERVER_BIN, {});
  const json body = {{"prompt", prompt}, {"max_tokens", 0}, {"echo", true}, {"logprobs", 1}};
  const Reply r = post(server, "/v1/completions", body.dump());
  REQUIRE_MESSAGE(r.status == 200, r.body.dump());
  const json& choice = r.body["choices"][0];
  CHECK(choice["text"] == prompt);
  CHECK(choice["finish_reason"] == "length");
  CHECK(r.body["usage"]["completion_tokens"] == 0);
  const json& lp = choice["logprobs"];
  REQUIRE(lp["tokens"].size() == tokens.size());
  CHECK(lp["token_logprobs"][0].is_null());
  CHECK(lp["top_logprobs"][0].is_null());
  CHECK(lp["text_offset"][0] == 0);
  for (size_t i = 1; i < tokens.size(); ++i) {
    CHECK(lp["token_logprobs"][i].get<double>() == doctest::Approx(logprob(rows[i - 1], tokens[i])).epsilon(1e-5));
    CHECK(lp["top_logprobs"][i].size() == 1);
    CHECK(lp["text_offset"][i].get<size_t>() >= lp["text_offset"][i - 1].get<size_t>());
  }

  // Echo and a continuation: the prompt's scores, then the generated tokens',
  // whose offsets go on after the prompt's text.
  json more = body;
  more["max_tokens"] = 4;
  more["temperature"] = 0;
  const Reply g = post(server, "/v1/completions", more.dump());
  REQUIRE(g.status == 200);
  const json& glp = g.body["choices"][0]["logprobs"];
  REQUIRE(glp["tokens"].size() == tokens.size() + 4);
  CHECK(glp["token_logprobs"][tokens.size() - 1] == lp["token_logprobs"][tokens.size() - 1]);
  CHECK(glp["text_offset"][tokens.size()] == prompt.size());
  const auto expected = greedy_scores(prompt, 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(glp["token_logprobs"][tokens.size() + i].get<double>() == doctest::Approx(expected[i].second).epsilon(1e-5));
  const std::string text = g.body["choices"][0]["text"];
  CHECK(text.starts_with(prompt));

  // Echo without logprobs: the prompt, then the text.
  const Reply e = post(server, "/v1/completions",
                       json{{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"echo", true}}.dump());
  CHECK(e.body["choices"][0]["text"] == text);
  CHECK(e.body["choices"][0]["logprobs"].is_null());
}

TEST_CASE("a prompt of token ids, or a list holding one, is the text's tokens; its echo is their text" *
          doctest::timeout(60)) {
  const std::vector<int32_t> tokens = prompt_tokens(kPrompt);
  ServerProcess server(SERVER_BIN, {});
  const auto complete = [&](const json& prompt, const json& extra = json::object()) {
    json body = {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}};
    body.update(extra);
    return post(server, "/v1/completions", body.dump());
  };
  const Reply text = complete(kPrompt);
  REQUIRE(text.status == 200);
  for (const json& prompt : {json(tokens), json::array({tokens})}) {
    INFO(prompt.dump());
    const Reply ids = complete(prompt);
    REQUIRE_MESSAGE(ids.status == 200, ids.body.dump());
    CHECK(ids.body["choices"][0]["text"] == text.body["choices"][0]["text"]);
    CHECK(ids.body["usage"]["prompt_tokens"] == tokens.size());
  }
  const Reply echoed = complete(tokens, {{"echo", true}, {"logprobs", 0}});
  REQUIRE(echoed.status == 200);
  CHECK(echoed.body["choices"][0]["logprobs"]["tokens"].size() == tokens.size() + 8);
  CHECK(echoed.body["choices"][0]["text"] ==
        complete(kPrompt, {{"echo", true}}).body["choices"][0]["text"].get<std::string>());

  for (const json& bad : {json::array(), json::array({1, -1}), json::array({1, 100000}), json::array({{1}, {2}}),
                          json::array({1.5}), json::array({true})}) {
    INFO(bad.dump());
    const Reply r = complete(bad);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["param"] == "prompt");
  }
}

TEST_CASE("n choices: each a solo request's with seed + i, sharing the prompt's KV, streamed too" *
          doctest::timeout(180)) {
  const json body = {{"prompt", kPrompt}, {"max_tokens", 16}, {"temperature", 1.0}, {"seed", 42}, {"n", 3}};
  ServerProcess server(SERVER_BIN, {"--parallel", "3"});
  const Reply r = post(server, "/v1/completions", body.dump());
  REQUIRE_MESSAGE(r.status == 200, r.body.dump());
  REQUIRE(r.body["choices"].size() == 3);
  std::set<std::string> distinct;
  int completion_tokens = 0;
  for (int i = 0; i < 3; ++i) {
    const json& choice = r.body["choices"][i];
    CHECK(choice["index"] == i);
    distinct.insert(choice["text"].get<std::string>());
    json solo = body;
    solo["n"] = 1;
    solo["seed"] = 42 + i;
    const Reply s = post(server, "/v1/completions", solo.dump());
    CHECK(s.body["choices"][0]["text"] == choice["text"]);
    completion_tokens += s.body["usage"]["completion_tokens"].get<int>();
  }
  CHECK(distinct.size() > 1);
  CHECK(r.body["usage"]["prompt_tokens"] == prompt_tokens(kPrompt).size());
  CHECK(r.body["usage"]["completion_tokens"] == completion_tokens);
  // The choices started together: the second and third copied the prompt's KV from the first's slot.
  CHECK_MESSAGE(std::regex_search(server.stderr_text(), std::regex("reused \\(" +
                                                                     std::to_string(prompt_tokens(kPrompt).size() - 1) +
                                                                     " from slot [0-9]\\)")),
                server.stderr_text());

  // Streamed: chunks name their choice; each choice's text is the same.
  std::map<int, std::string> streamed;
  std::map<int, std::string> finished;
  const std::vector<json> events = stream_events(server, "/v1/completions", body);
  for (const json& e : events) {
    const json& c = e["choices"][0];
    streamed[c["index"].get<int>()] += c["text"].get<std::string>();
    if (!c["finish_reason"].is_null()) finished[c["index"].get<int>()] = c["finish_reason"];
  }
  REQUIRE(streamed.size() == 3);
  REQUIRE(finished.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(streamed[i] == r.body["choices"][i]["text"]);
  CHECK(events.back()["usage"]["completion_tokens"] == completion_tokens);

  // One slot: the choices one after the other, the same texts.
  ServerProcess one(SERVER_BIN, {});
  const Reply o = post(one, "/v1/completions", body.dump());
  REQUIRE(o.status == 200);
  for (int i = 0; i < 3; ++i) CHECK(o.body["choices"][i]["text"] == r.body["choices"][i]["text"]);

  // Chats take n too.
  const json chat = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 8}, {"seed", 7}, {"n", 2}};
  const Reply c = post(one, "/v1/chat/completions", chat.dump());
  REQUIRE(c.status == 200);
  CHECK(c.body["choices"].size() == 2);
  CHECK(c.body["choices"][1]["index"] == 1);
}

TEST_CASE("presence and frequency penalties: the program's text with the same flags" * doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {});
  const auto cli = [](const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {STORIES_BIN, "-p", kPrompt, "--no-display-prompt", "-t", "1", "-n", "40",
                                     "--temp", "0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const auto r = run_process(argv);
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.size() - 1);
  };
  const auto served = [&](double presence, double frequency) {
    const json body = {{"prompt", kPrompt},           {"max_tokens", 40},
                       {"temperature", 0},            {"presence_penalty", presence},
                       {"frequency_penalty", frequency}};
    const Reply r = post(server, "/v1/completions", body.dump());
    REQUIRE(r.status == 200);
    return r.body["choices"][0]["text"].get<std::string>();
  };
  const std::string plain = served(0, 0);
  const std::string presence = served(1.5, 0);
  const std::string frequency = served(0, 1.0);
  CHECK(presence != plain);
  CHECK(frequency != plain);
  CHECK(presence == cli({"--presence-penalty", "1.5"}));
  CHECK(frequency == cli({"--frequency-penalty", "1.0"}));
}

TEST_CASE("/metrics: Prometheus text whose counts move; 404 without --metrics, 401 without the key" *
          doctest::timeout(120)) {
  ServerProcess server(SERVER_BIN, {"--metrics", "--api-key", "k"});
  const httplib::Headers key = {{"Authorization", "Bearer k"}};
  const auto scrape = [&] {
    auto res = server.client().Get("/metrics", key);
    REQUIRE(res);
    REQUIRE(res->status == 200);
    CHECK(res->get_header_value("Content-Type").starts_with("text/plain"));
    // Every sample follows its # HELP and # TYPE lines.
    std::map<std::string, double> samples;
    std::set<std::string> helped, typed;
    const std::regex help("# HELP (kiln_[a-z_]+) .+"), type("# TYPE (kiln_[a-z_]+) (counter|gauge)"),
        sample("(kiln_[a-z_]+) (-?[0-9.eE+-]+|NaN)");
    std::istringstream lines(res->body);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, help)) {
        helped.insert(m[1]);
      } else if (std::regex_match(line, m, type)) {
        typed.insert(m[1]);
      } else {
        REQUIRE_MESSAGE(std::regex_match(line, m, sample), line);
        CHECK(helped.contains(m[1]));
        CHECK(typed.contains(m[1]));
        samples[m[1]] = std::stod(m[2]);
      }
    }
    return samples;
  };
  const auto before = scrape();
  for (const char* name : {"kiln_prompt_tokens_total", "kiln_tokens_predicted_total", "kiln_prompt_seconds_total",
                           "kiln_tokens_predicted_seconds_total", "kiln_requests_processing",
                           "kiln_requests_deferred", "kiln_kv_cache_tokens", "kiln_prefix_cache_hits_total"})
    CHECK_MESSAGE(before.contains(name), name);
  CHECK(before.at("kiln_tokens_predicted_total") == 0);
  const json body = {{"prompt", kPrompt}, {"max_tokens", 5}, {"temperature", 0}};
  REQUIRE(post(server, "/v1/completions", body.dump(), key).status == 200);
  // The slot is free once its last token is in the cache, a step after the answer.
  auto after = scrape();
  for (int i = 0; i < 100 && after.at("kiln_requests_processing") != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = scrape();
  }
  CHECK(after.at("kiln_prompt_tokens_total") == double(prompt_tokens(kPrompt).size()));
  CHECK(after.at("kiln_tokens_predicted_total") == 5);
  CHECK(after.at("kiln_requests_total") == 1);
  CHECK(after.at("kiln_kv_cache_tokens") == double(prompt_tokens(kPrompt).size() + 5));
  CHECK(after.at("kiln_requests_processing") == 0);
  CHECK(after.at("kiln_n_decode_total") > 0);

  auto unauthorized = server.client().Get("/metrics");
  REQUIRE(unauthorized);
  CHECK(unauthorized->status == 401);
  ServerProcess off(SERVER_BIN, {});
  auto missing = off.client().Get("/metrics");
  REQUIRE(missing);
  CHECK(missing->status == 404);
}

TEST_CASE("bad scores, choices and penalties get one-line 400s naming the field" * doctest::timeout(60)) {
  ServerProcess server(SERVER_BIN, {});
  const json chat = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  const auto with = [](json body, const std::string& key, json value) {
    body[key] = std::move(value);
    return body;
  };
  const json prompt = {{"prompt", "Hi"}};
  one_line_error(server, "/v1/chat/completions", with(with(chat, "logprobs", true), "top_logprobs", 21), "top_logprobs");
  one_line_error(server, "/v1/chat/completions", with(chat, "top_logprobs", 2), "top_logprobs");  // without logprobs
  one_line_error(server, "/v1/chat/completions", with(chat, "logprobs", "yes"), "logprobs");
  one_line_error(server, "/v1/chat/completions", with(chat, "logprobs", 3), "logprobs");
  one_line_error(server, "/v1/chat/completions", with(chat, "echo", true), "echo");
  one_line_error(server, "/v1/completions", with(prompt, "logprobs", true), "logprobs");
  one_line_error(server, "/v1/completions", with(prompt, "logprobs", 6), "logprobs");
  one_line_error(server, "/v1/completions", with(prompt, "echo", 1), "echo");
  one_line_error(server, "/v1/completions", with(prompt, "max_tokens", 0), "max_tokens");  // without echo
  for (const json& n : {json(0), json(100), json(1.5), json("2")}) {
    one_line_error(server, "/v1/completions", with(prompt, "n", n), "n");
    one_line_error(server, "/v1/chat/completions", with(chat, "n", n), "n");
  }
  one_line_error(server, "/v1/completions", with(prompt, "presence_penalty", 2.5), "presence_penalty");
  one_line_error(server, "/v1/completions", with(prompt, "frequency_penalty", -3), "frequency_penalty");
  CHECK(post(server, "/v1/completions", with(with(prompt, "n", 16), "max_tokens", 1).dump()).status == 200);
}
