// The server's reasoning_content on stories260K: with a template that opens
// the block for the model (DeepSeek-R1, Qwen3.5), the reply (which never
// closes it) is all reasoning, streamed alike, and reasoning_format none
// gives it back as content; enable_thinking false (a request's
// chat_template_kwargs, --reasoning-budget 0, --chat-template-kwargs) and
// constrained replies skip it; with templates where the model opens the
// block itself (Qwen3's think tags, gpt-oss's harmony channels, Gemma 4's
// thought channel), a grammar that makes the model write one shows the
// split at temperature 1 over several seeds. A reasoning budget closes the
// block after that many tokens, and a tool call's marker written inside the
// block is reasoning, not a call.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/server_process.hpp"

using nlohmann::json;
using kiln::test::post;
using kiln::test::Reply;
using kiln::test::ServerProcess;

namespace {

// Messages as ChatML; the reasoning of earlier replies between think tags.
constexpr const char* kTurns =
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}<|im_end|>\n{% endfor %}";
// DeepSeek-R1 and Qwen3.5: the prompt opens the block, unless thinking is off.
const std::string kOpensBlock = std::string(kTurns) +
    "{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}"
    "{% endif %}";
// Qwen3: the model opens it.
const std::string kModelOpens = std::string(kTurns) + "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

json chat(json extra = json::object()) {
  json body = {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}}, {"max_tokens", 16}, {"temperature", 0}};
  body.update(extra);
  return body;
}

json message(const ServerProcess& server, const json& body) {
  const Reply r = post(server, "/v1/chat/completions", body.dump());
  REQUIRE(r.status == 200);
  return r.body["choices"][0]["message"];
}

// A stream's reasoning and content deltas, each added up.
std::pair<std::string, std::string> streamed(const ServerProcess& server, const json& body) {
  std::string reasoning, content;
  for (const json& e : kiln::test::stream_events(server, "/v1/chat/completions", body)) {
    if (e["choices"].empty()) continue;
    const json& delta = e["choices"][0]["delta"];
    reasoning += delta.value("reasoning_content", "");
    content += delta.value("content", "");
  }
  return {reasoning, content};
}

std::string write_template(const kiln::test::TempFolder& dir, const std::string& name, const std::string& source) {
  const std::string file = dir.file(name);
  std::ofstream(file) << source;
  return file;
}

}  // namespace

TEST_CASE("a block the prompt opens: the reply is reasoning, streamed alike; none, thinking off, constraints") {
  const kiln::test::TempFolder dir("server-reasoning");
  const std::string file = write_template(dir, "opens.jinja", kOpensBlock);
  ServerProcess server(SERVER_BIN, {"--chat-template-file", file});
  const json props = kiln::test::get(server, "/props").body;
  CHECK(props["reasoning_format"] == "auto");
  CHECK(props["reasoning_markers"] == json::array({"<think>", "</think>"}));

  const std::string raw = message(server, chat({{"reasoning_format", "none"}}))["content"];
  REQUIRE(!trimmed(raw).empty());
  const json split = message(server, chat());
  CHECK(split["reasoning_content"] == trimmed(raw));
  CHECK(split["content"] == "");
  CHECK(message(server, chat({{"reasoning_format", "deepseek-legacy"}})) ==
        json{{"role", "assistant"}, {"content", raw}, {"reasoning_content", trimmed(raw)}});
  const auto [reasoning, content] = streamed(server, chat({{"stream", true}}));
  CHECK(reasoning == trimmed(raw));
  CHECK(content == "");

  // Thinking off: the template closes the block, the reply is content.
  const json off = {{"chat_template_kwargs", {{"enable_thinking", false}}}};
  const json answer = message(server, chat(off));
  CHECK_FALSE(answer.contains("reasoning_content"));
  CHECK(!trimmed(answer["content"]).empty());

  // A constrained reply skips the reasoning: the prompt closes the block.
  for (int seed = 1; seed <= 3; ++seed) {
    const json m = message(server, chat({{"temperature", 1}, {"seed", seed}, {"max_tokens", 40},
                                         {"response_format", {{"type", "json_object"}}}}));
    CHECK_FALSE(m.contains("reasoning_content"));
    CHECK(trimmed(m["content"]).starts_with("{"));
  }

  // An earlier reply's reasoning reaches the template.
  json turns = chat();
  turns["messages"].push_back({{"role", "assistant"}, {"content", "It was fun."}, {"reasoning_content", "A short one."}});
  turns["messages"].push_back({{"role", "user"}, {"content", "Another."}});
  CHECK(post(server, "/v1/chat/completions", turns.dump()).status == 200);

  const Reply bad = post(server, "/v1/chat/completions", chat({{"reasoning_format", "hidden"}}).dump());
  CHECK(bad.status == 400);
  CHECK(bad.body["error"]["param"] == "reasoning_format");
  CHECK(post(server, "/v1/chat/completions", chat({{"chat_template_kwargs", "x"}}).dump()).status == 400);

  // The server's defaults: thinking off, and a request that turns it back on.
  ServerProcess quiet(SERVER_BIN, {"--chat-template-file", file, "--reasoning-budget", "0"});
  CHECK(message(quiet, chat()) == answer);
  CHECK(message(quiet, chat({{"chat_template_kwargs", {{"enable_thinking", true}}}}))["reasoning_content"] == trimmed(raw));
  ServerProcess kwargs(SERVER_BIN, {"--chat-template-file", file, "--chat-template-kwargs", R"({"enable_thinking": false})",
                                    "--reasoning-format", "none"});
  CHECK(message(kwargs, chat()) == answer);
  CHECK(kiln::test::get(kwargs, "/props").body["reasoning_format"] == "none");
}

TEST_CASE("a block the model opens, in each family's markers: apart at temperature 1, streamed alike") {
  const kiln::test::TempFolder dir("server-reasoning-model");
  struct Family {
    std::string name, template_text, open, close;  // close: up to the content
  };
  const std::vector<Family> families = {
      {"think", kModelOpens, "<think>", "</think>"},
      // The template's text names the markers; stories260K writes them as text.
      {"harmony", "{# <|channel|> #}" + kModelOpens, "<|channel|>analysis<|message|>",
       "<|end|><|start|>assistant<|channel|>final<|message|>"},
      {"gemma4", "{# <|channel> #}" + kModelOpens, "<|channel>thought\n", "<channel|>"},
  };
  for (const Family& f : families) {
    INFO(f.name);
    ServerProcess server(SERVER_BIN, {"--chat-template-file", write_template(dir, f.name + ".jinja", f.template_text)});
    // The grammar makes stories260K write a block, then an answer.
    const json literal = f.open;
    const json close = f.close;
    const std::string grammar = "root ::= " + literal.dump() + " [a-z ]{1,12} " + close.dump() + " [a-z]{1,12}";
    for (int seed = 1; seed <= 3; ++seed) {
      INFO("seed " << seed);
      const json body = chat({{"temperature", 1}, {"seed", seed}, {"max_tokens", 200}, {"grammar", grammar}});
      json none = body;
      none["reasoning_format"] = "none";
      const std::string raw = message(server, none)["content"];
      const size_t end = raw.find(f.close);
      REQUIRE(end != std::string::npos);
      const std::string reasoning = trimmed(raw.substr(f.open.size(), end - f.open.size()));
      const std::string content = raw.substr(end + f.close.size());
      const json m = message(server, body);
      CHECK(m.value("reasoning_content", "") == reasoning);
      CHECK(m["content"] == content);
      json stream = body;
      stream["stream"] = true;
      CHECK(streamed(server, stream) == std::pair{reasoning, content});
    }
  }
}

TEST_CASE("a reasoning budget ends the reasoning after that many tokens; a call's marker in it starts no call") {
  const kiln::test::TempFolder dir("server-reasoning-budget");
  const std::string file = write_template(dir, "opens.jinja", "{# <tool_call> #}" + kOpensBlock);
  ServerProcess server(SERVER_BIN, {"--chat-template-file", file});
  const json as_written = {{"reasoning_format", "none"}, {"max_tokens", 40}};
  // The first five tokens of the reply without a budget.
  json scored = chat(as_written);
  scored["logprobs"] = true;
  const Reply whole = post(server, "/v1/chat/completions", scored.dump());
  REQUIRE(whole.status == 200);
  std::string five;
  for (int i = 0; i < 5; ++i) five += whole.body["choices"][0]["logprobs"]["content"][i]["token"].get<std::string>();
  REQUIRE(whole.body["choices"][0]["message"]["content"].get<std::string>().starts_with(five));

  json budget = chat(as_written);
  budget["reasoning_budget_tokens"] = 5;
  const std::string raw = message(server, budget)["content"];
  CHECK(raw.starts_with(five + "</think>"));
  budget.erase("reasoning_format");
  const json split = message(server, budget);
  CHECK(split["reasoning_content"] == trimmed(five));
  const std::string answer = raw.substr((five + "</think>").size());
  CHECK(split["content"] == answer.substr(std::min(answer.size(), answer.find_first_not_of(" \t\r\n"))));
  budget["thinking_budget_tokens"] = 3;  // llama-server's other name, under the first
  CHECK(message(server, budget) == split);

  // The server's budget and message, for requests that give none.
  ServerProcess flagged(SERVER_BIN, {"--chat-template-file", file, "--reasoning-budget", "5", "--reasoning-budget-message",
                                     " Enough."});
  CHECK(message(flagged, chat(as_written))["content"].get<std::string>().starts_with(five + " Enough.</think>"));
  const Reply bad = post(server, "/v1/chat/completions", chat({{"reasoning_budget_tokens", -2}}).dump());
  CHECK(bad.status == 400);
  CHECK(bad.body["error"]["param"] == "reasoning_budget_tokens");

  // tool_choice auto constrains a call from its marker on, but not one the
  // model writes while it reasons (here the budget's message writes it): the
  // reply is the one without tools (the template does not show them).
  const json tool = {{"type", "function"},
                     {"function", {{"name", "get_time"}, {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}};
  for (const char* format : {"auto", "none"}) {
    INFO(format);
    const json without_tools = chat({{"max_tokens", 40}, {"reasoning_format", format}, {"reasoning_budget_tokens", 3},
                                     {"reasoning_budget_message", " <tool_call>"}});
    json with_tools = without_tools;
    with_tools["tools"] = json::array({tool});
    const json m = message(server, with_tools);
    CHECK(m.value("reasoning_content", m["content"].get<std::string>()).find("<tool_call>") != std::string::npos);
    CHECK(m == message(server, without_tools));
  }
  // Qwen3-Coder and Qwen3.5's format: there the marker ends the reasoning and
  // starts the call, constrained to the function's schema.
  ServerProcess xml(SERVER_BIN, {"--chat-template-file",
                                 write_template(dir, "xml.jinja", "{# <tool_call><function= #}" + kOpensBlock)});
  for (const char* format : {"auto", "none"}) {
    INFO(format);
    const json body = chat({{"max_tokens", 100}, {"tools", json::array({tool})}, {"reasoning_budget_tokens", 3},
                            {"reasoning_budget_message", " <tool_call>"}, {"parallel_tool_calls", false},
                            {"reasoning_format", format}});
    const json choice = post(xml, "/v1/chat/completions", body.dump()).body["choices"][0];
    CHECK(choice["finish_reason"] == "tool_calls");
    REQUIRE(choice["message"]["tool_calls"].size() == 1);
    CHECK(choice["message"]["tool_calls"][0]["function"]["name"] == "get_time");
    const json& m = choice["message"];  // content is null beside calls, unless it holds the reasoning (none)
    const std::string reasoning = m.contains("reasoning_content") ? m["reasoning_content"] : m["content"];
    CHECK(reasoning.find("<tool_call>") == std::string::npos);
  }
}
